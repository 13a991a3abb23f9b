// The Writing lab's section on rotary positions (issue 37, item 5), shown when the open model has them
// (Llama, Qwen 2: its config's rope_theta, read by core/models/llama_config.h into the summary). One
// 2-D pair of a head's query and key, turned by their positions as core/layers/rotary.h turns them
// (Hugging Face's rotate_half: dimension i is paired with i + D/2, the pair turned by p * omega_i with
// omega_i = theta^(-2i/D)), and the score of that pair, which depends on the distance m - n alone.
// The pair's numbers are an example (the module does not expose a head's queries and keys); its speed
// omega_i is the open model's, after its config's rope_scaling: the module's own table (rotarySpeeds(),
// the one the passes turn by), so the scaling rules live in core/layers/rotary.cpp alone. No DOM here.

// The example pair before any turn: a query of length 1 at 20 degrees, a key of length 0.8 at 60 degrees.
const EXAMPLE_Q = { length: 1, degrees: 20 };
const EXAMPLE_K = { length: 0.8, degrees: 60 };
const MAX_DISTANCE = 255; // the slider's range; the chart shows about three turns of the pair, 24 to 255 tokens, and the distance chosen
const ELSEWHERE = [10, 40]; // the same distance further into the text: n + 10 and n + 40

const vector = ({ length, degrees }) => [length * Math.cos((degrees * Math.PI) / 180),
  length * Math.sin((degrees * Math.PI) / 180)];

/** A pair (x[i], x[i + D/2]) turned by `angle` radians, as rotary.h's apply(). */
export function turn([x, y], angle) {
  const c = Math.cos(angle), s = Math.sin(angle);
  return [x * c - y * s, y * c + x * s];
}

const dot = (a, b) => a[0] * b[0] + a[1] * b[1];

/** The chart's last distance: three turns of a pair turning omega a token, within 24..255, and d. */
const chartEnd = (omega, d) => Math.max(d, Math.min(MAX_DISTANCE, Math.max(24, Math.ceil((3 * 2 * Math.PI) / omega))));

/** The score of the example pair with the query at position m and the key at n, each turned by its own position. */
function pairScore(omega, m, n) {
  return dot(turn(vector(EXAMPLE_Q), m * omega), turn(vector(EXAMPLE_K), n * omega));
}

/** The open model's rotary positions from its config: {theta, D}, or null (learned positions: GPT-2). */
export function rotaryOf(config) {
  return Number.isFinite(config?.ropeTheta) && config.headDim > 1 ? { theta: config.ropeTheta,
    D: config.headDim } : null;
}

const degrees = (radians) => {
  const d = ((radians * 180) / Math.PI) % 360;
  return d > 180 ? d - 360 : d <= -180 ? d + 360 : d;
};
const number = (x) => (Math.abs(x) >= 100 ? x.toFixed(0) : Math.abs(x) >= 1 ? x.toFixed(2) : x.toPrecision(3));

/** What the config's rope_scaling did to the speeds, in words: which pairs it slowed and by how much. */
function scalingText(r) {
  const slowed = (k) => Math.abs(k - 1) > 1e-3; // above float32's rounding of theta^(-2i/D)
  const scaled = r.slowedBy.map((k, i) => ({ i, k })).filter(({ k }) => slowed(k));
  if (!scaled.length) return 'Each ω is θ^(−2i/D): this config.json sets no rope_scaling.';
  const most = Math.max(...scaled.map(({ k }) => k));
  const pairs = scaled.length === 1 ? `pair ${scaled[0].i}` : `pairs ${scaled[0].i} to ${scaled.at(-1).i}`;
  const here = slowed(r.slowedBy[r.pair]) ? `pair ${r.pair} turns ${number(r.slowedBy[r.pair])} times slower `
    + 'than θ^(−2i/D)' : `pair ${r.pair} is not slowed`;
  return `This config.json's rope_scaling slows ${pairs} (up to ${number(most)} times), so that a text longer than `
    + `training had stays within the turns the model knows: ${here}, and ω above is after it.`;
}

export const rotary = {
  id: 'rotary',
  title: 'Rotary positions: a token\'s place as a turn',
  text: 'GPT-2 adds a learned position vector to each token. Llama and Qwen 2 have no such table: before a query is '
    + 'compared with a key, every pair of numbers in them is turned, like the hand of a clock, by an angle that grows '
    + 'with the token\'s position. The query of the token at position m is turned by m × ω, the key of the token at '
    + 'position n by n × ω. The score multiplies the two and adds up (a dot product), and for two arrows that only '
    + 'depends on their lengths and the angle between them: turning both by the same amount changes nothing. What is '
    + 'left of the positions is the difference of the two turns, (m − n) × ω, so the score depends on how far '
    + 'apart the tokens are, not on where they stand. Each pair turns at its own speed ω = θ^(−2i/D) (θ: '
    + 'config.json\'s rope_theta; D: a head\'s size; i: the pair): the first pairs turn fast and tell near tokens '
    + 'apart, the last turn slowly and tell far ones apart.',
  properties: ['ropeDistance', 'ropeKey', 'ropePair'],
  dependsOn: ['ropeDistance', 'ropeKey', 'ropePair'],
  needsOpen: true,
  // Shown only for a model with rotary positions (the page hides the section otherwise): the open model's summary.
  appliesTo: (opened) => !!opened?.rotary,
  compute(ctx, v) {
    const { config } = ctx.opened.model;
    const spec = rotaryOf(config);
    const speeds = ctx.opened.model.rotarySpeeds();
    if (!spec || speeds.length !== spec.D / 2) throw new Error('This model has learned positions (a table of position '
      + 'vectors, as GPT-2), not rotary ones.');
    const { theta, D } = spec;
    const pair = Math.min(v.ropePair, D / 2 - 1);
    const omega = speeds[pair];
    // rope_scaling's share: how many times slower each pair turns than θ^(−2i/D) alone says (1: not scaled).
    const slowedBy = Array.from(speeds, (w, i) => theta ** (-(2 * i) / D) / w);
    const n = v.ropeKey, d = v.ropeDistance, m = n + d;
    const q = vector(EXAMPLE_Q), k = vector(EXAMPLE_K);
    const qm = turn(q, m * omega), kn = turn(k, n * omega);
    return {
      theta, D, pair, omega, m, n, d, maxPositions: config.maxPositions, omega0: speeds[0], slowest: speeds[D / 2 - 1],
      slowedBy,
      // Angles from the key to the query, in degrees within (-180, 180]: before any turn, and after.
      q, k, qm, kn, score: dot(qm, kn), start: degrees(Math.atan2(q[1], q[0]) - Math.atan2(k[1], k[0])),
      between: degrees(Math.atan2(qm[1], qm[0]) - Math.atan2(kn[1], kn[0])), turned: degrees(d * omega),
      // The same distance further on, each computed by turning both arrows again (not by the formula).
      elsewhere: ELSEWHERE.map((shift) => ({ m: m + shift, n: n + shift,
        score: pairScore(omega, m + shift, n + shift) })),
      curve: Array.from({ length: chartEnd(omega, d) + 1 },
        (_, dist) => ({ x: dist, y: pairScore(omega, n + dist, n) })),
    };
  },
  figures(r, v) {
    const notes = [];
    if (r.pair !== v.ropePair) notes.push(`pair ${v.ropePair} does not exist (a head of ${r.D} dimensions has `
      + `${r.D / 2} pairs): showing ${r.pair}`);
    if (r.m >= r.maxPositions) notes.push(`position m = ${r.m} is past this model's last position `
      + `(${r.maxPositions - 1}); the turn is still defined, the model never saw it`);
    const turnText = (p) => `${p} × ${number(r.omega)} = ${number(p * r.omega)} rad`;
    const bound = 1.05 * Math.max(EXAMPLE_Q.length, EXAMPLE_K.length) + 0.2;
    return [
      ...(notes.length ? [{ kind: 'text', id: 'rotary-note', status: 'bad', text: `${notes.join('; ')}.` }] : []),
      { kind: 'arrows', id: 'rotary-pair', title: `Pair ${r.pair} (dimensions ${r.pair} and ${r.pair + r.D / 2}), m = `
        + `${r.m}, n = ${r.n}`, radius: bound,
        arrows: [
          { label: 'q', x: r.q[0], y: r.q[1], series: 0, dashed: true },
          { label: 'k', x: r.k[0], y: r.k[1], series: 1, dashed: true },
          { label: `q at ${r.m}`, x: r.qm[0], y: r.qm[1], series: 0 },
          { label: `k at ${r.n}`, x: r.kn[0], y: r.kn[1], series: 1 },
        ],
        angle: { from: 3, to: 2, label: `${r.between.toFixed(0)}°` } },
      { kind: 'text', id: 'rotary-score',
        text: `The query (dashed q) turned by m × ω = ${turnText(r.m)}, the key (dashed k) by n × ω = `
          + `${turnText(r.n)}. Before the turns the query was ${r.start.toFixed(0)}° from the key; now the query is `
          + `${r.between.toFixed(1)}° from the key: ${r.start.toFixed(0)}° + (m − n) × ω, with (m − n) × ω = `
          + `${r.d} × ${number(r.omega)} rad = ${r.turned.toFixed(1)}° (a whole turn is 360°). This pair's share of `
          + `the score: ${r.score.toFixed(4)}. The same distance ${r.d} further on: `
          + `${r.elsewhere.map((e) => `m = ${e.m}, n = ${e.n}: ${e.score.toFixed(4)}`).join('; ')}, the same. Move the `
          + 'distance and the score changes; move n and it does not.' },
      { kind: 'chart', id: 'rotary-curve', title: `Pair ${r.pair}'s score against the distance m − n`, width: 460,
        height: 230, xTitle: 'distance m − n (tokens)', yTitle: 'q · k of the pair', xMin: 0,
        xMax: r.curve.length - 1, yMin: -1, yMax: 1, series: [
          { label: `ω = ${number(r.omega)} rad a token`, kind: 'curve', points: r.curve },
          { label: `m − n = ${r.d}`, kind: 'points', points: [{ x: r.d, y: r.score }] },
        ] },
      { kind: 'text', id: 'rotary-model',
        text: `This model: rope_theta θ = ${r.theta}, ${r.D} dimensions a head, so ${r.D / 2} pairs, from ω = `
          + `${number(r.omega0)} rad a token (pair 0: a full turn every ${number((2 * Math.PI) / r.omega0)} tokens) to `
          + `ω = ${number(r.slowest)} (pair ${r.D / 2 - 1}: a turn every ${number((2 * Math.PI) / r.slowest)} `
          + `tokens). ${scalingText(r)} The pair's numbers are an example: a trained model's queries and keys differ `
          + 'from token to token, but every one is turned this way.' },
    ];
  },
};
