// A user's file as a source the labs' openers read (web/models/*: {name, size, read(offset,
// length) -> Promise<Uint8Array>, text() -> Promise<string>}): the worker hands them browser Files this
// way; the CLI hands them files on disk (web/cli/file_source.mjs). No DOM here.

/** A browser File (or Blob with a name) as a source: each read is one slice, never the whole file. */
export function fileSource(file) {
  return {
    name: file.name,
    size: file.size,
    async read(offset, length) {
      return new Uint8Array(await file.slice(offset, offset + length).arrayBuffer());
    },
    text: () => file.text(),
  };
}
