// Records (core/io/json.h): configs and inputs go to C++ as JSON text, results come back as JSON text
// with their typed arrays beside it as blobs. JSON has no NaN, Infinity or typed arrays, and a message
// may need to name a value's type: those get the markers json.h describes.

export function encodeRecord(value) {
  if (value === undefined) return 'null';
  return JSON.stringify(value, function replace(key, v) {
    if (typeof v === 'number') return Number.isFinite(v) ? v : { $number: String(v) };
    if (typeof v === 'bigint' || typeof v === 'function' || typeof v === 'symbol') return { $type: typeof v };
    if (key !== '' && v !== null && typeof v === 'object' && !Array.isArray(v)) {
      if (ArrayBuffer.isView(v)) return Array.from(v);
      const proto = Object.getPrototypeOf(v);
      if (proto !== Object.prototype && proto !== null) return { $type: v.constructor?.name ?? 'Object' };
    }
    return v;
  });
}
export function decodeRecord(text, raw) {
  return JSON.parse(text, (key, v) => {
    if (v === null || typeof v !== 'object' || Array.isArray(v)) return v;
    if ('$blob' in v) return raw._blob(v.$blob).slice(); // copied out of the heap at once
    if ('$number' in v) return Number(v.$number);
    return v;
  });
}
