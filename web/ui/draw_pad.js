// A 28 x 28 pad to draw a digit on with a mouse, a pen or a finger: white strokes on black, as MNIST
// draws its digits, with a soft round brush. pixels() gives the drawing as 784 bytes (0..255), moved so
// that its centre of mass sits in the middle, as MNIST centres its digits. Keyboard users get the
// buttons (Clear) and can still use the lab's held-out queries.
const SIDE = 28;
const SCALE = 8; // CSS px per pixel
const RADIUS = 1.4; // brush radius in pixels

export class DrawPad {
  /** onDone() when a stroke ends (the page then looks the drawing up). */
  constructor(container, { onDone, label = 'Draw a digit' }) {
    this.values = new Float32Array(SIDE * SIDE);
    this.onDone = onDone;
    this.canvas = Object.assign(document.createElement('canvas'),
      { width: SIDE * SCALE, height: SIDE * SCALE, className: 'draw-pad' });
    this.canvas.setAttribute('role', 'img');
    this.canvas.setAttribute('aria-label', `${label}: draw with the mouse, a pen or a finger`);
    this.canvas.style.touchAction = 'none';
    const clear = Object.assign(document.createElement('button'),
      { type: 'button', textContent: 'Clear', id: 'draw-clear' });
    clear.addEventListener('click', () => this.clear());
    const box = Object.assign(document.createElement('div'), { className: 'draw-pad-box' });
    box.append(this.canvas, clear);
    container.append(box);
    let last = null;
    const at = (e) => {
      const r = this.canvas.getBoundingClientRect();
      return { x: ((e.clientX - r.left) / r.width) * SIDE, y: ((e.clientY - r.top) / r.height) * SIDE };
    };
    this.canvas.addEventListener('pointerdown', (e) => {
      this.canvas.setPointerCapture(e.pointerId);
      last = at(e);
      this.stroke(last, last);
    });
    this.canvas.addEventListener('pointermove', (e) => {
      if (!last) return;
      const p = at(e);
      this.stroke(last, p);
      last = p;
    });
    const end = () => {
      if (!last) return;
      last = null;
      this.onDone();
    };
    this.canvas.addEventListener('pointerup', end);
    this.canvas.addEventListener('pointercancel', end);
    this.draw();
  }

  get empty() { return !this.values.some((v) => v > 0); }

  clear() {
    this.values.fill(0);
    this.draw();
  }

  /** Paints the brush along the segment a -> b (positions in pixels). */
  stroke(a, b) {
    const steps = Math.max(1, Math.ceil(Math.hypot(b.x - a.x, b.y - a.y) * 3));
    for (let i = 0; i <= steps; i++) {
      const x = a.x + ((b.x - a.x) * i) / steps, y = a.y + ((b.y - a.y) * i) / steps;
      for (let py = Math.floor(y - RADIUS - 1); py <= Math.ceil(y + RADIUS + 1); py++) {
        for (let px = Math.floor(x - RADIUS - 1); px <= Math.ceil(x + RADIUS + 1); px++) {
          if (px < 0 || py < 0 || px >= SIDE || py >= SIDE) continue;
          const d = Math.hypot(px + 0.5 - x, py + 0.5 - y);
          const ink = Math.max(0, Math.min(1, RADIUS + 0.5 - d)); // full inside the radius, a soft edge
          this.values[py * SIDE + px] = Math.max(this.values[py * SIDE + px], ink);
        }
      }
    }
    this.draw();
  }

  draw() {
    const ctx = this.canvas.getContext('2d');
    const image = ctx.createImageData(SIDE, SIDE);
    this.values.forEach((v, i) => {
      const g = Math.round(v * 255);
      image.data.set([g, g, g, 255], 4 * i);
    });
    const small = new OffscreenCanvas(SIDE, SIDE);
    small.getContext('2d').putImageData(image, 0, 0);
    ctx.imageSmoothingEnabled = false;
    ctx.drawImage(small, 0, 0, SIDE * SCALE, SIDE * SCALE);
  }

  /** The drawing as 784 bytes, its centre of mass moved to the middle (whole pixels). */
  pixels() {
    let mass = 0, cx = 0, cy = 0;
    this.values.forEach((v, i) => {
      mass += v;
      cx += v * (i % SIDE);
      cy += v * Math.floor(i / SIDE);
    });
    const out = new Uint8Array(SIDE * SIDE);
    if (!mass) return out;
    const dx = Math.round((SIDE - 1) / 2 - cx / mass), dy = Math.round((SIDE - 1) / 2 - cy / mass);
    this.values.forEach((v, i) => {
      const x = (i % SIDE) + dx, y = Math.floor(i / SIDE) + dy;
      if (x >= 0 && y >= 0 && x < SIDE && y < SIDE) out[y * SIDE + x] = Math.round(v * 255);
    });
    return out;
  }
}
