// Perceptually uniform colour scales. viridis is matplotlib's default (van der Walt & Smith, 2015),
// here as its 11 anchor colours at 0, 0.1, ..., 1 with linear interpolation between them.
// In web/shared/: pure (no DOM), and used by both the page (web/ui) and the CLI (web/cli), which import
// downward only: neither reaches into the other's folder for it.
const VIRIDIS = ['#440154', '#482475', '#414487', '#355f8d', '#2a788e', '#21918c', '#22a884', '#44bf70',
  '#7ad151', '#bddf26', '#fde725'];
const MAGMA = ['#000004', '#140e36', '#3b0f70', '#641a80', '#8c2981', '#b73779', '#de4968', '#f7705c',
  '#fe9f6d', '#fecf92', '#fcfdbf'];
// Grey for printing; cividis-like blue to yellow for colour-vision deficiency.
const GREYS = ['#ffffff', '#000000'];
const CIVIDIS = ['#00224e', '#123570', '#3b496c', '#575d6d', '#707173', '#8a8779', '#a69d75', '#c4b56c',
  '#e4cf5b', '#fee838'];

function parse(hex) {
  return [1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16));
}

function table(anchors) {
  const rgb = anchors.map(parse);
  const lut = new Uint8ClampedArray(256 * 3);
  for (let i = 0; i < 256; i++) {
    const x = (i / 255) * (rgb.length - 1);
    const j = Math.min(rgb.length - 2, Math.floor(x));
    const f = x - j;
    for (let c = 0; c < 3; c++) lut[3 * i + c] = Math.round(rgb[j][c] * (1 - f) + rgb[j + 1][c] * f);
  }
  return lut;
}

// Diverging, for signed values centred at 0 (ColorBrewer PuOr, colour-vision-deficiency safe):
// orange below 0, white at 0, purple above.
const DIVERGING = ['#b35806', '#e08214', '#fdb863', '#fee0b6', '#f7f7f7', '#d8daeb', '#b2abd2', '#8073ac', '#542788'];

export const PALETTES = {
  diverging: table(DIVERGING),
  viridis: table(VIRIDIS),
  magma: table(MAGMA),
  cividis: table(CIVIDIS),
  greys: table(GREYS),
};

/** value in [min, max] -> [r, g, b] */
export function colorAt(palette, value, min = 0, max = 1) {
  const lut = PALETTES[palette] ?? PALETTES.viridis;
  const t = max > min ? (value - min) / (max - min) : 0;
  const i = Math.max(0, Math.min(255, Math.round((Number.isFinite(t) ? t : 0) * 255)));
  return [lut[3 * i], lut[3 * i + 1], lut[3 * i + 2]];
}

export function cssColor(rgb) {
  return `rgb(${rgb[0]}, ${rgb[1]}, ${rgb[2]})`;
}
