// How the page, the worker and the CLI write a size in bytes ("523 MB"): one rule, so that a file's size
// and the limit it is refused by, or a download's progress and the size listed beside the model, can be
// compared in one sentence.
//
// An MB here is 2^20 bytes, written "MB" as every message of the course writes it. Not 10^6, because
// what the sizes are set against counts in 2^20: the core's memory rule (core/models/model_memory.h:
// the 3840 MB a lab holds, 4 GB less 256 MB for the module; the trainers' 512 MB budget), whose
// messages the page shows as they come, and the file limits (web/models/checkpoint_files.js: 1 MB,
// 64 MB). Written in 10^6, a 10 GiB file was "10737.4 MB" beside "more than the 3840 MB a lab holds".

const MEGABYTE = 2 ** 20;

/**
 * bytes -> the number of MB as written, without the unit ("0.04", "3.4", "523"): two decimals under
 * 1 MB (a small file, the start of a download), one under 10 MB, whole above; trailing zeros dropped,
 * so that a limit reads as itself ("1", "64", not "1.0").
 */
export function megabyteFigure(bytes) {
  const mb = bytes / MEGABYTE;
  const digits = mb < 1 ? 2 : mb < 10 ? 1 : 0;
  return String(Number(mb.toFixed(digits)));
}

/** bytes -> "523 MB" (megabyteFigure's rule). */
export const megabytes = (bytes) => `${megabyteFigure(bytes)} MB`;
