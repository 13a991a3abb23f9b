#include "zip_reader.h"

#include <algorithm>
#include <unordered_set>

#include "utf8.h"

namespace attnlab {

namespace {

const std::string kFile = "pytorch_model.bin: ";

// Record signatures ("PK" and two bytes), from APPNOTE.TXT 6.3 (the ZIP specification).
constexpr std::uint32_t kLocalHeader = 0x04034b50;
constexpr std::uint32_t kCentralHeader = 0x02014b50;
constexpr std::uint32_t kEndRecord = 0x06054b50;
constexpr std::uint32_t kZip64EndRecord = 0x06064b50;
constexpr std::uint32_t kZip64Locator = 0x07064b50;
constexpr std::uint64_t kEndRecordBytes = 22, kZip64EndRecordBytes = 56, kZip64LocatorBytes = 20;
constexpr std::uint64_t kCentralHeaderBytes = 46;
// Fields that say "the value is in the ZIP64 record or extra field".
constexpr std::uint16_t kMax16 = 0xFFFF;
constexpr std::uint32_t kMax32 = 0xFFFFFFFF;
// General purpose bits: 0 encrypted, 3 sizes in a data descriptor, 6 strong encryption, 13 masked header.
constexpr std::uint16_t kEncryptedBits = (1u << 0) | (1u << 6) | (1u << 13);
constexpr std::uint16_t kDataDescriptorBit = 1u << 3;

std::uint16_t u16(const std::uint8_t* p) { return std::uint16_t(p[0] | (p[1] << 8)); }
std::uint32_t u32(const std::uint8_t* p) {
  return std::uint32_t(p[0]) | (std::uint32_t(p[1]) << 8) | (std::uint32_t(p[2]) << 16) | (std::uint32_t(p[3]) << 24);
}
std::uint64_t u64(const std::uint8_t* p) { return std::uint64_t(u32(p)) | (std::uint64_t(u32(p + 4)) << 32); }

std::string n(std::uint64_t v) { return std::to_string(v); }

// "0x" and `digits` hex digits of v.
std::string hex(std::uint32_t v, int digits) {
  static const char* xdigits = "0123456789abcdef";
  std::string s = "0x";
  for (int k = 4 * (digits - 1); k >= 0; k -= 4) s += xdigits[(v >> k) & 15];
  return s;
}

std::string entry_text(const ZipEntry& e) { return "entry " + zip_shown_name(e.name); }

std::string method_name(std::uint16_t method) {
  switch (method) {
    case 8: return ", deflate";
    case 9: return ", deflate64";
    case 12: return ", bzip2";
    case 14: return ", LZMA";
    case 93: return ", zstd";
    case 95: return ", xz";
    default: return "";
  }
}

// The ZIP64 extended information extra field (id 0x0001) of a central directory record: 8-byte values
// for exactly those fields whose 4-byte (or 2-byte disk) value is the sentinel, in the order size,
// compressed size, local header offset, disk (APPNOTE 4.5.3).
std::string read_zip64_extra(const std::uint8_t* extra, std::uint64_t extra_size, const std::string& what,
                             std::uint64_t& size, std::uint64_t& compressed, std::uint64_t& offset,
                             std::uint32_t& disk, bool size_in_extra, bool compressed_in_extra,
                             bool offset_in_extra, bool disk_in_extra) {
  bool seen = false;
  std::uint64_t p = 0;
  while (p < extra_size) {
    if (extra_size - p < 4) return kFile + what + " has a malformed extra field (" + n(extra_size - p) + " stray bytes at its end)";
    const std::uint16_t id = u16(extra + p), length = u16(extra + p + 2);
    p += 4;
    if (length > extra_size - p)
      return kFile + what + " has an extra field (id " + hex(id, 4) + ") of " + n(length) + " bytes where " + n(extra_size - p) + " remain";
    if (id == 0x0001) {
      if (seen) return kFile + what + " has two ZIP64 extra fields";
      seen = true;
      const std::uint64_t need = 8 * (int(size_in_extra) + int(compressed_in_extra) + int(offset_in_extra)) + 4 * int(disk_in_extra);
      if (length < need)
        return kFile + what + " has a ZIP64 extra field of " + n(length) + " bytes; its sizes and offset need " + n(need);
      const std::uint8_t* q = extra + p;
      if (size_in_extra) { size = u64(q); q += 8; }
      if (compressed_in_extra) { compressed = u64(q); q += 8; }
      if (offset_in_extra) { offset = u64(q); q += 8; }
      if (disk_in_extra) disk = u32(q);
    }
    p += length;
  }
  if (!seen && (size_in_extra || compressed_in_extra || offset_in_extra || disk_in_extra))
    return kFile + what + " has a size or offset of 0xFFFFFFFF (\"in the ZIP64 extra field\") but no ZIP64 extra field";
  return {};
}

}  // namespace

std::string zip_shown_name(const std::string& s) {
  // Quoted and escaped like a JSON string, cut near 60 bytes on a UTF-8 boundary (as safetensors.cpp's
  // shown()); bytes that are not UTF-8 are shown as \xNN so a message is always valid UTF-8.
  static const char* xdigits = "0123456789abcdef";
  const bool utf8 = is_utf8(reinterpret_cast<const std::uint8_t*>(s.data()), s.size());
  std::string q = "\"";
  for (unsigned char c : s) {
    if (c == '"') q += "\\\"";
    else if (c == '\\') q += "\\\\";
    else if (c == '\n') q += "\\n";
    else if (c < 0x20 || c == 0x7F || (c >= 0x80 && !utf8)) q += std::string("\\x") + xdigits[c >> 4] + xdigits[c & 15];
    else q += char(c);
    if (q.size() > 64) break;
  }
  q += "\"";
  if (q.size() <= 60) return q;
  std::size_t cut = 57;
  while (cut > 0 && (std::uint8_t(q[cut]) & 0xC0) == 0x80) --cut;
  return q.substr(0, cut) + "...";
}

long ZipDirectory::find(const std::string& name) const {
  for (std::size_t i = 0; i < entries.size(); ++i)
    if (entries[i].name == name) return long(i);
  return -1;
}

std::string zip_find_end(const std::uint8_t* tail, std::uint64_t tail_size, std::uint64_t file_size, ZipEnd& out) {
  out = ZipEnd{};
  if (tail_size != std::min(file_size, kZipTailBytes))
    return kFile + "the end records are read from the last min(file size, " + n(kZipTailBytes) + ") = " +
           n(std::min(file_size, kZipTailBytes)) + " bytes, not " + n(tail_size);
  if (file_size < kEndRecordBytes)
    return kFile + "not a ZIP archive: " + n(file_size) + " bytes, fewer than the 22 of an end of central directory record";
  // The end record is the last thing in the file: search back for a signature whose comment length
  // reaches exactly the file's end, so that "PK\5\6" inside a comment or a storage is not taken for it.
  const std::uint64_t tail_start = file_size - tail_size;
  std::uint64_t at = tail_size - kEndRecordBytes;
  bool found = false;
  for (;;) {
    if (u32(tail + at) == kEndRecord && u16(tail + at + 20) == tail_size - at - kEndRecordBytes) {
      found = true;
      break;
    }
    if (at == 0) break;
    --at;
  }
  if (!found) {
    // When the tail is the whole file its start says more: a ZIP's first local header, or the magic
    // number torch.save's format before 1.6 begins with (a pickled LONG1 0x1950a86a20f9469cfc6c).
    const std::string legacy = "load it in Python and save it again with PyTorch >= 1.6, or convert it to model.safetensors";
    static const std::uint8_t kLegacyMagic[] = {0x80, 0x02, 0x8a, 0x0a, 0x6c, 0xfc, 0x9c, 0x46, 0xf9, 0x20, 0x6a, 0xa8, 0x50, 0x19};
    if (tail_start == 0 && tail_size >= sizeof kLegacyMagic && std::equal(kLegacyMagic, kLegacyMagic + sizeof kLegacyMagic, tail))
      return kFile + "a checkpoint in the format torch.save wrote before PyTorch 1.6, not a ZIP archive: " + legacy;
    if (tail_start == 0 && tail_size >= 4 && u32(tail) == kLocalHeader)
      return kFile + "a ZIP archive cut short or damaged: no end of central directory record in its " + n(tail_size) + " bytes";
    return kFile + "no end of central directory record in its last " + n(tail_size) +
           " bytes: the file is cut short, or not a ZIP archive (checkpoints saved by PyTorch before 1.6 are not: " + legacy + ")";
  }
  const std::uint8_t* e = tail + at;
  ZipEnd end;
  end.file_size = file_size;
  end.end_offset = tail_start + at;
  const std::uint16_t disk = u16(e + 4), directory_disk = u16(e + 6);
  const std::uint16_t disk_entries16 = u16(e + 8), entries16 = u16(e + 10);
  const std::uint32_t size32 = u32(e + 12), offset32 = u32(e + 16);
  end.entries = entries16;
  end.directory_size = size32;
  end.directory_offset = offset32;

  // A ZIP64 end record, found through the locator just before the end record.
  if (at >= kZip64LocatorBytes && u32(e - kZip64LocatorBytes) == kZip64Locator) {
    const std::uint8_t* locator = e - kZip64LocatorBytes;
    const std::uint64_t locator_offset = end.end_offset - kZip64LocatorBytes;
    const std::uint32_t record_disk = u32(locator + 4), disks = u32(locator + 16);
    const std::uint64_t record_offset = u64(locator + 8);
    if (record_disk != 0 || disks > 1)
      return kFile + "the archive spans " + n(disks) + " disks; only single-file archives are read";
    if (record_offset > locator_offset || locator_offset - record_offset < kZip64EndRecordBytes)
      return kFile + "the ZIP64 end record's offset " + n(record_offset) + " leaves no room for it before its locator at " + n(locator_offset);
    if (record_offset < tail_start)
      return kFile + "the ZIP64 end record at " + n(record_offset) + " lies before the last " + n(tail_size) + " bytes, where it is looked for";
    const std::uint8_t* r = tail + (record_offset - tail_start);
    if (u32(r) != kZip64EndRecord) return kFile + "no ZIP64 end record at " + n(record_offset) + ", where its locator points";
    // The record's size field counts the bytes after its first 12; any more than the fixed 44 are an
    // "extensible data sector", which must end where the locator begins.
    const std::uint64_t record_size = u64(r + 4);
    if (record_size != locator_offset - record_offset - 12)
      return kFile + "the ZIP64 end record at " + n(record_offset) + " says it has " + n(record_size) + " more bytes, but its locator follows after " +
             n(locator_offset - record_offset - 12);
    const std::uint32_t disk64 = u32(r + 16), directory_disk64 = u32(r + 20);
    const std::uint64_t disk_entries64 = u64(r + 24), entries64 = u64(r + 32);
    const std::uint64_t size64 = u64(r + 40), offset64 = u64(r + 48);
    if (disk64 != 0 || directory_disk64 != 0 || disk_entries64 != entries64)
      return kFile + "the ZIP64 end record describes a multi-disk archive; only single-file archives are read";
    // The 16- and 32-bit fields are the sentinel or the same value (torch writes both).
    if ((entries16 != kMax16 && entries16 != entries64) || (disk_entries16 != kMax16 && disk_entries16 != entries64) ||
        (size32 != kMax32 && size32 != size64) || (offset32 != kMax32 && offset32 != offset64) ||
        (disk != kMax16 && disk != 0) || (directory_disk != kMax16 && directory_disk != 0))
      return kFile + "the end record (" + n(entries16) + " entries, directory of " + n(size32) + " bytes at " + n(offset32) +
             ") disagrees with the ZIP64 end record (" + n(entries64) + " entries, " + n(size64) + " bytes at " + n(offset64) + ")";
    end.zip64 = true;
    end.entries = entries64;
    end.directory_size = size64;
    end.directory_offset = offset64;
    end.end_offset = record_offset;
  } else if (disk != 0 || directory_disk != 0 || disk_entries16 != entries16) {
    return kFile + "the end record describes a multi-disk archive; only single-file archives are read";
  }

  // The central directory lies inside the file and ends where the end record begins.
  if (end.directory_offset > end.end_offset)
    return kFile + "the central directory's offset " + n(end.directory_offset) + " lies past the end record at " + n(end.end_offset) +
           " (the file has " + n(file_size) + " bytes)";
  if (end.directory_size != end.end_offset - end.directory_offset)
    return kFile + "the central directory of " + n(end.directory_size) + " bytes at " + n(end.directory_offset) +
           " does not end where the end record begins (" + n(end.end_offset) + ")";
  if (end.directory_size > kZipMaxDirectoryBytes)
    return kFile + "the central directory has " + n(end.directory_size) + " bytes; more than " + n(kZipMaxDirectoryBytes) + " are refused";
  if (end.entries > end.directory_size / kCentralHeaderBytes)
    return kFile + n(end.entries) + " entries cannot fit a central directory of " + n(end.directory_size) + " bytes";
  out = end;
  return {};
}

std::string parse_zip_directory(const std::uint8_t* directory, std::uint64_t size, const ZipEnd& end, ZipDirectory& out) {
  out = ZipDirectory{};
  if (size != end.directory_size)
    return kFile + "the central directory has " + n(end.directory_size) + " bytes; " + n(size) + " were given";
  ZipDirectory dir;
  dir.end = end;
  dir.entries.reserve(std::size_t(end.entries));  // at most directory_size / 46: checked by zip_find_end
  std::unordered_set<std::string> names;
  std::uint64_t p = 0;
  for (std::uint64_t k = 0; k < end.entries; ++k) {
    const std::string which = "central directory record " + n(k);
    if (size - p < kCentralHeaderBytes) return kFile + which + " at " + n(end.directory_offset + p) + " runs past the central directory";
    const std::uint8_t* h = directory + p;
    if (u32(h) != kCentralHeader) return kFile + which + " at " + n(end.directory_offset + p) + " has no central directory signature";
    ZipEntry entry;
    entry.flags = u16(h + 8);
    entry.method = u16(h + 10);
    entry.crc32 = u32(h + 16);
    std::uint64_t compressed = u32(h + 20);
    entry.size = u32(h + 24);
    const std::uint64_t name_size = u16(h + 28), extra_size = u16(h + 30), comment_size = u16(h + 32);
    std::uint32_t disk = u16(h + 34);
    entry.local_header_offset = u32(h + 42);
    if (size - p - kCentralHeaderBytes < name_size + extra_size + comment_size)
      return kFile + which + "'s name, extra field and comment run past the central directory";
    entry.name.assign(reinterpret_cast<const char*>(h + kCentralHeaderBytes), std::size_t(name_size));
    const std::string what = entry_text(entry);
    if (!is_utf8(h + kCentralHeaderBytes, std::size_t(name_size))) return kFile + what + " has a name that is not UTF-8";
    if (entry.name.empty()) return kFile + which + " has an empty name";
    std::string error = read_zip64_extra(h + kCentralHeaderBytes + name_size, extra_size, what, entry.size, compressed,
                                         entry.local_header_offset, disk, entry.size == kMax32, compressed == kMax32,
                                         entry.local_header_offset == kMax32, disk == kMax16);
    if (!error.empty()) return error;
    p += kCentralHeaderBytes + name_size + extra_size + comment_size;

    if (entry.flags & kEncryptedBits) return kFile + what + " is encrypted";
    if (entry.method != 0)
      return kFile + what + " is compressed (method " + n(entry.method) + method_name(entry.method) +
             "): torch.save stores every entry uncompressed, and only stored entries are read";
    if (compressed != entry.size)
      return kFile + what + " is stored, yet its compressed size " + n(compressed) + " differs from its size " + n(entry.size);
    if (disk != 0) return kFile + what + " starts on disk " + n(disk) + "; only single-file archives are read";
    if (!names.insert(entry.name).second) return kFile + "two entries are named " + zip_shown_name(entry.name);
    // The local header (30 bytes and the name at least) and the data must come before the directory.
    const std::uint64_t least = kZipLocalHeaderBytes + name_size;
    if (entry.local_header_offset > end.directory_offset || end.directory_offset - entry.local_header_offset < least ||
        end.directory_offset - entry.local_header_offset - least < entry.size)
      return kFile + what + ": its local header at " + n(entry.local_header_offset) + " and " + n(entry.size) +
             " bytes of data do not fit before the central directory at " + n(end.directory_offset);
    dir.entries.push_back(std::move(entry));
  }
  if (p != size) return kFile + "the central directory has " + n(size - p) + " bytes after its last record";

  // Each entry's room runs to the next local header (by offset) or the directory; what it must hold at
  // the least (header, name, data) is checked now, the extra field once the local header is read.
  std::vector<std::size_t> order(dir.entries.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return dir.entries[a].local_header_offset < dir.entries[b].local_header_offset;
  });
  for (std::size_t k = 0; k < order.size(); ++k) {
    ZipEntry& e = dir.entries[order[k]];
    e.room_end = k + 1 < order.size() ? dir.entries[order[k + 1]].local_header_offset : end.directory_offset;
    const std::uint64_t least = kZipLocalHeaderBytes + e.name.size();
    if (e.room_end - e.local_header_offset < least || e.room_end - e.local_header_offset - least < e.size) {
      const ZipEntry& next = dir.entries[order[k + 1]];  // the directory case was checked above
      return kFile + entry_text(e) + " (local header at " + n(e.local_header_offset) + ", " + n(e.size) +
             " bytes of data) overlaps " + entry_text(next) + " at " + n(next.local_header_offset);
    }
  }
  out = std::move(dir);
  return {};
}

std::string zip_local_header_length(const std::uint8_t* first30, const ZipEntry& entry, std::uint64_t& length) {
  length = 0;
  const std::string what = entry_text(entry);
  if (u32(first30) != kLocalHeader)
    return kFile + what + " has no local header at " + n(entry.local_header_offset) + ", where the central directory points";
  const std::uint64_t name_size = u16(first30 + 26), extra_size = u16(first30 + 28);
  if (name_size != entry.name.size())
    return kFile + what + "'s local header has a name of " + n(name_size) + " bytes; the central directory's has " + n(entry.name.size());
  const std::uint64_t header = kZipLocalHeaderBytes + name_size + extra_size;
  const std::uint64_t room = entry.room_end - entry.local_header_offset;  // >= 30 + name + size (parse_zip_directory)
  if (room - entry.size < header)
    return kFile + what + "'s local header (" + n(header) + " bytes at " + n(entry.local_header_offset) + ") and its " + n(entry.size) +
           " bytes of data run past " + n(entry.room_end) + ", where the next entry or the central directory begins";
  length = header;
  return {};
}

std::string zip_read_local_header(const std::uint8_t* header, std::uint64_t length, ZipEntry& entry) {
  entry.data_offset = 0;
  std::uint64_t expected = 0;
  std::string error = zip_local_header_length(header, entry, expected);
  if (!error.empty()) return error;
  const std::string what = entry_text(entry);
  if (length != expected)
    return kFile + what + "'s local header has " + n(expected) + " bytes; " + n(length) + " were given";
  const std::uint16_t flags = u16(header + 6), method = u16(header + 8);
  if (flags & kEncryptedBits) return kFile + what + " is encrypted";
  if (method != entry.method) return kFile + what + "'s local header says method " + n(method) + "; the central directory says " + n(entry.method);
  if (entry.name.compare(0, std::string::npos, reinterpret_cast<const char*>(header + kZipLocalHeaderBytes), entry.name.size()) != 0)
    return kFile + what + "'s local header names another entry";
  // Without a data descriptor the local header holds the CRC and sizes (0xFFFFFFFF: in its ZIP64 extra
  // field, and the central directory's are used); torch sets bit 3 and writes zeros here.
  if (!(flags & kDataDescriptorBit)) {
    const std::uint32_t crc = u32(header + 14), compressed = u32(header + 18), size = u32(header + 22);
    if (crc != entry.crc32 || (compressed != kMax32 && compressed != entry.size) || (size != kMax32 && size != entry.size))
      return kFile + what + "'s local header (CRC-32 " + hex(crc, 8) + ", " + n(size) + " bytes) disagrees with the central directory (CRC-32 " +
             hex(entry.crc32, 8) + ", " + n(entry.size) + " bytes)";
  }
  entry.data_offset = entry.local_header_offset + length;  // fits the room: zip_local_header_length
  return {};
}

std::uint32_t zip_crc32_update(std::uint32_t crc, const std::uint8_t* bytes, std::size_t size) {
  static const auto table = [] {
    struct Table { std::uint32_t v[256]; } t{};
    for (std::uint32_t i = 0; i < 256; ++i) {
      std::uint32_t c = i;
      for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
      t.v[i] = c;
    }
    return t;
  }();
  crc = ~crc;
  for (std::size_t i = 0; i < size; ++i) crc = table.v[(crc ^ bytes[i]) & 0xFF] ^ (crc >> 8);
  return ~crc;
}

std::string zip_check_crc(const ZipEntry& entry, const std::uint8_t* bytes, std::uint64_t size) {
  if (size != entry.size)
    return kFile + entry_text(entry) + " has " + n(entry.size) + " bytes; " + n(size) + " were given for its CRC-32 check";
  const std::uint32_t crc = zip_crc32_update(0, bytes, std::size_t(size));
  if (crc == entry.crc32) return {};
  return kFile + entry_text(entry) + " fails its CRC-32 check (stored " + hex(entry.crc32, 8) + ", computed " + hex(crc, 8) +
         "): the file is damaged";
}

}  // namespace attnlab
