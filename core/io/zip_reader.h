// A reader for the ZIP archives torch.save writes (PyTorch >= 1.6): `pytorch_model.bin` is a ZIP of
// uncompressed ("stored") entries: <prefix>/data.pkl, <prefix>/data/<key> (the tensors' storages),
// <prefix>/version, maybe <prefix>/byteorder. Only what such an archive needs is read: one disk, stored
// entries, ZIP64 end records and extra fields (torch writes a ZIP64 end record into every archive, and
// ZIP64 extra fields for entries past 4 GiB), the data descriptors that follow each entry's data.
//
// Sans-IO, so the page can read a 300 MB File range by range and never hold it (the same shape as
// safetensors.h's index API). The caller reads, in this order:
//   1. the file's last min(file size, kZipTailBytes) bytes    -> zip_find_end          -> ZipEnd
//   2. the central directory, [end.directory_offset, + size)  -> parse_zip_directory   -> ZipDirectory
//   3. for each entry it needs: 30 bytes at local_header_offset -> zip_local_header_length, then those
//      30 + name + extra bytes -> zip_read_local_header -> the entry's data_offset (one read of
//      30 + name + 128 bytes holds both for torch's archives, whose extra field is the padding that
//      aligns the data to 64 bytes: 4 to 67 bytes, and 20 more of ZIP64 sizes past 4 GiB)
//   4. an entry's bytes, [data_offset, data_offset + size); zip_check_crc for small entries
// Every step returns "" or "pytorch_model.bin: ..." naming the entry and what is wrong; nothing throws
// (exceptions are off in the WASM build), nothing is allocated from a size the file states before that
// size is checked against the bytes that hold it, and a failed step leaves its output empty.
//
// The layout checks: every offset and size inside the file; the central directory where the end record
// says and ending where the end record begins; names UTF-8 and unique; each entry's local header, name,
// extra field and data inside the room before the next entry's local header (so no two entries' data
// overlap) and before the central directory; only method 0 (stored); no encryption; one disk.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace attnlab {

// The end of central directory record (22 bytes) with the longest comment (65,535 bytes), and before it
// the ZIP64 locator (20 bytes) and ZIP64 end record (56 bytes): the most the end of an archive can take.
constexpr std::uint64_t kZipTailBytes = 22 + 65535 + 20 + 56;
// A central directory larger than this is refused before it is read: torch writes one entry (about 80
// bytes) per storage, so even 100,000 tensors stay under 10 MB.
constexpr std::uint64_t kZipMaxDirectoryBytes = 16u << 20;
// The bytes of a local header before its name and extra field.
constexpr std::uint64_t kZipLocalHeaderBytes = 30;

struct ZipEnd {
  std::uint64_t file_size = 0;
  std::uint64_t entries = 0;           // number of central directory records
  std::uint64_t directory_offset = 0;  // where the central directory starts in the file
  std::uint64_t directory_size = 0;
  std::uint64_t end_offset = 0;        // where the ZIP64 end record (else the end record) starts
  bool zip64 = false;
};

struct ZipEntry {
  std::string name;
  std::uint16_t method = 0;  // 0 = stored (the only one accepted)
  std::uint16_t flags = 0;   // general purpose bits (bit 3: sizes and CRC in a data descriptor after the data)
  std::uint32_t crc32 = 0;
  std::uint64_t size = 0;    // uncompressed = compressed for a stored entry
  std::uint64_t local_header_offset = 0;
  // The first byte after this entry's room: the next entry's local header, or the central directory.
  // Its local header, name, extra field and data must end by then.
  std::uint64_t room_end = 0;
  // Set by zip_read_local_header; 0 until then (no entry's data can start at 0).
  std::uint64_t data_offset = 0;
  bool data_located() const { return data_offset != 0; }
};

struct ZipDirectory {
  std::vector<ZipEntry> entries;  // in the central directory's order
  ZipEnd end;
  // The index of the entry named `name`, or -1.
  long find(const std::string& name) const;
};

// Step 1: the end records, from the last `tail_size` bytes of a file of `file_size` bytes (the caller
// passes tail_size = min(file_size, kZipTailBytes)).
std::string zip_find_end(const std::uint8_t* tail, std::uint64_t tail_size, std::uint64_t file_size, ZipEnd& out);

// Step 2: the central directory's end.directory_size bytes -> the entries, every check that needs
// no other bytes made (see above).
std::string parse_zip_directory(const std::uint8_t* directory, std::uint64_t size, const ZipEnd& end, ZipDirectory& out);

// Step 3a: the first kZipLocalHeaderBytes bytes of entry's local header -> the header's full length
// (30 + name + extra), checked to fit the entry's room.
std::string zip_local_header_length(const std::uint8_t* first30, const ZipEntry& entry, std::uint64_t& length);
// Step 3b: the `length` bytes of entry's local header -> entry.data_offset, once the header is checked
// against the central directory (signature, name, method, and sizes and CRC unless a data descriptor
// holds them) and the data is found to end inside the entry's room.
std::string zip_read_local_header(const std::uint8_t* header, std::uint64_t length, ZipEntry& entry);

// The standard CRC-32 (ISO-HDLC: the polynomial 0xEDB88320 reflected, as zlib's crc32()). Feed a long
// entry in pieces: crc = zip_crc32_update(crc, piece, n), starting from 0.
std::uint32_t zip_crc32_update(std::uint32_t crc, const std::uint8_t* bytes, std::size_t n);
// "" when the entry's bytes (all of them) match its CRC-32, else a message naming the entry.
std::string zip_check_crc(const ZipEntry& entry, const std::uint8_t* bytes, std::uint64_t size);

// A helper the torch reader shares: the entry's name as messages show it (quoted, escaped, cut at about
// 60 bytes: a hostile name can be 65,535 bytes). Well-formed UTF-8 is utf8.h's.
std::string zip_shown_name(const std::string& name);

}  // namespace attnlab
