// A long run's history in a fixed budget, however long a lab trains (a teacher may leave one running
// through a lecture: at top speed a run takes ~100,000 steps an hour).
//
//   ThinningList   attention snapshots (and evaluations): at most maxCount items and maxBytes; when
//                  full, every second item goes, the first and the newest always stay, so a scrubber
//                  still spans the whole run, at half the resolution.
//   StepSeries     a per-step metric (loss, accuracy): at most maxPoints points; when full, each pair
//                  of neighbouring points becomes their mean, so one point covers `every` steps.

export class ThinningList {
  /** sizeOf(item) -> bytes (typed arrays' byteLength; the rest is small). */
  constructor({ maxCount, maxBytes = Infinity, sizeOf = () => 0 }) {
    if (!(maxCount >= 2)) throw new Error(`maxCount must be at least 2, got ${maxCount}`);
    this.maxCount = maxCount;
    this.maxBytes = maxBytes;
    this.sizeOf = sizeOf;
    this.items = [];
    this.bytes = 0;
    this.thinnings = 0;
  }

  get length() { return this.items.length; }
  at(i) { return this.items.at(i); }

  push(...items) {
    for (const item of items) {
      this.items.push(item);
      this.bytes += this.sizeOf(item);
      while (this.items.length > 2 && (this.items.length > this.maxCount || this.bytes > this.maxBytes)) this.thin();
    }
  }

  // Keeps items 0, 2, 4, ... and the newest.
  thin() {
    const last = this.items.length - 1;
    this.items = this.items.filter((_, i) => i % 2 === 0 || i === last);
    this.bytes = this.items.reduce((sum, item) => sum + this.sizeOf(item), 0);
    this.thinnings++;
  }

  clear() {
    this.items = [];
    this.bytes = 0;
  }
}

/** The bytes of an object's typed arrays (one level deep): what a snapshot costs. */
export function typedArrayBytes(item) {
  let bytes = 0;
  for (const value of Object.values(item ?? {})) if (ArrayBuffer.isView(value)) bytes += value.byteLength;
  return bytes;
}

export class StepSeries {
  constructor({ maxPoints }) {
    if (!(maxPoints >= 2 && maxPoints % 2 === 0)) throw new Error('maxPoints must be an even number >= 2, '
      + `got ${maxPoints}`);
    this.maxPoints = maxPoints;
    this.values = new Float32Array(maxPoints); // values[i]: the mean over steps i*every+1 .. (i+1)*every
    this.length = 0; // complete points
    this.every = 1; // steps per point
    this.partialSum = 0; // steps of the point being filled
    this.partialCount = 0;
    this.steps = 0;
  }

  push(...values) {
    for (const v of values) {
      this.steps++;
      this.partialSum += v;
      if (++this.partialCount < this.every) continue;
      if (this.length === this.maxPoints) {
        this.halve(); // the point being filled now covers twice the steps: it is not complete yet
        if (this.partialCount < this.every) continue;
      }
      this.values[this.length++] = this.partialSum / this.partialCount;
      this.partialSum = 0;
      this.partialCount = 0;
    }
  }

  // Pairs of points -> their means: the series keeps its span at half the resolution.
  halve() {
    for (let i = 0; i < this.length / 2; i++) this.values[i] = (this.values[2 * i] + this.values[2 * i + 1]) / 2;
    this.length /= 2;
    this.every *= 2;
  }

  /** The complete points, as a view (copy it to keep it). */
  get ys() { return this.values.subarray(0, this.length); }
  /** The first points' values, up to n (a chart's y range). */
  head(n) { return Array.from(this.values.subarray(0, Math.min(n, this.length))); }
}
