// SentencePiece unigram, as Marian (opus-mt) uses it (issue 14): a .spm model file -> normalise ->
// Viterbi over the pieces -> pieces and ids; and ids -> text. Then MarianTokenizer, which maps the pieces
// through vocab.json and appends </s>, as Hugging Face's MarianTokenizer does.
// No DOM, no Node APIs: the Worker, the page and the CLI share it.
//
// Each stage follows the C++ library (google/sentencepiece 0.1.97, what Debian's python3-sentencepiece
// wraps and what tests/node/sentencepiece.test.mjs checks against):
//   1. the model   a serialized ModelProto (sentencepiece_model.proto), read by a small protobuf reader
//   2. normalise   normalizer.cc: the precompiled charsmap (a Darts-clone double-array trie over UTF-8
//                  bytes, then the replacement strings) applied by longest prefix match
//                  (Normalizer::NormalizePrefix); extra whitespace removed; the dummy prefix "▁";
//                  spaces as "▁" (U+2581)
//   3. encode      unigram_model.cc Model::EncodeOptimized: Viterbi, best total score, in float32 as
//                  the C++ keeps it; then sentencepiece_processor.cc PopulateSentencePieceText, which
//                  merges runs of unknown pieces (or splits them into <0xNN> byte pieces)
//   4. decode      SentencePieceProcessor::Decode: "▁" -> " ", the first one dropped, controls invisible
// Only unigram models are read (every Marian model is one); BPE, WORD and CHAR models are refused.

// ---- Piece types and model types (sentencepiece_model.proto) ----

export const PieceType = Object.freeze({ NORMAL: 1, UNKNOWN: 2, CONTROL: 3, USER_DEFINED: 4, UNUSED: 5, BYTE: 6 });
const MODEL_TYPES = { 1: 'UNIGRAM', 2: 'BPE', 3: 'WORD', 4: 'CHAR' };

export const SPACE_SYMBOL = '\u2581'; // "▁", LOWER ONE EIGHTH BLOCK: how spm writes a space inside pieces
const SPACE_SYMBOL_UTF8 = [0xE2, 0x96, 0x81];
const REPLACEMENT_UTF8 = [0xEF, 0xBF, 0xBD]; // U+FFFD
const UNK_PENALTY = 10; // unigram_model.cc kUnkPenalty: an unknown character scores min_score - 10
const FLT_MIN = 1.1754943508222875e-38; // <cfloat> FLT_MIN, the smallest normal float (positive!)

const utf8Encoder = new TextEncoder();
// Not fatal: a malformed piece decodes with U+FFFD, never throws. ignoreBOM: a U+FEFF that starts a
// piece or a normalised text is a character like any other (the default would silently drop it).
const utf8Decoder = new TextDecoder('utf-8', { ignoreBOM: true });

// ---- 1. Protobuf wire format ----
// Just enough of it for ModelProto: varints (int32, bool, enum), fixed32 (float), length-delimited
// (string, bytes, messages); fixed64 is skipped. Every read is bounds-checked, so truncated or random
// bytes end in a ModelError, never in an endless loop or a read past the end.

/** An Error whose message names the file, as "source.spm: ...". */
export class ModelError extends Error {
  constructor(file, message) {
    super(`${file}: ${message}`);
    this.name = 'ModelError';
  }
}

class ProtoReader {
  constructor(bytes, file) {
    this.bytes = bytes;
    this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    this.file = file;
  }

  fail(what, at) {
    return new ModelError(this.file, `not a SentencePiece model: at byte ${at} of ${this.bytes.length}, ${what} (a `
      + 'truncated or corrupt file?)');
  }

  /**
   * A varint at pos (at most 10 bytes, before end) -> [value, low32, next]. value is exact below 2^53;
   * low32 holds bits 0..31, which is what an int32 field means (negative int32s are written as 10-byte
   * sign-extended varints: pad_id -1).
   */
  varint(pos, end) {
    let value = 0, low32 = 0;
    for (let i = 0, shift = 0; i < 10; i++, shift += 7) {
      if (pos >= end) throw this.fail('a number runs past the end', pos);
      const b = this.bytes[pos++];
      if (shift < 32) low32 = (low32 | ((b & 0x7F) << shift)) >>> 0;
      value += (b & 0x7F) * 2 ** shift;
      if (b < 0x80) return [value, low32, pos];
    }
    throw this.fail('a number longer than 10 bytes', pos - 10);
  }

  /**
   * Calls onField(field, wireType, value, pos) for each field of the message in bytes [start, end).
   * value: for varints [value, low32]; for length-delimited fields [begin, end) of the payload; for
   * fixed32 the offset of the 4 bytes. Unknown fields are the caller's to ignore, as protobuf does.
   */
  fields(start, end, onField) {
    let pos = start;
    while (pos < end) {
      const at = pos;
      const [tag, , next] = this.varint(pos, end);
      pos = next;
      const field = Math.floor(tag / 8), wire = tag % 8;
      if (field === 0 || tag > 0xFFFFFFFF) throw this.fail(`field number ${field} (tag ${tag})`, at);
      if (wire === 0) {
        const [value, low32, after] = this.varint(pos, end);
        pos = after;
        onField(field, wire, [value, low32], at);
      } else if (wire === 1) {
        if (pos + 8 > end) throw this.fail(`field ${field} (8 bytes) runs past the end`, at);
        pos += 8; // fixed64: ModelProto has none we read
      } else if (wire === 2) {
        const [length, , after] = this.varint(pos, end);
        if (after + length > end) throw this.fail(`field ${field} (${length} bytes) runs past the end`, at);
        pos = after + length;
        onField(field, wire, [after, pos], at);
      } else if (wire === 5) {
        if (pos + 4 > end) throw this.fail(`field ${field} (4 bytes) runs past the end`, at);
        onField(field, wire, pos, at);
        pos += 4;
      } else {
        // 3 and 4 are proto2 groups, which no SentencePiece model uses; 6 and 7 do not exist.
        throw this.fail(`field ${field} has wire type ${wire}, which a SentencePiece model never uses`, at);
      }
    }
  }

  string([begin, end]) { return utf8Decoder.decode(this.bytes.subarray(begin, end)); }
  float(pos) { return this.view.getFloat32(pos, true); }
}

// Per field: its wire type and how to read it. Fields not listed (the trainer's settings that do not
// change encoding) are skipped.
const VARINT = 0, LEN = 2, FIXED32 = 5;
const asInt32 = ([, low32]) => low32 | 0;
const asBool = ([value]) => value !== 0;

const PIECE_FIELDS = { // ModelProto.SentencePiece
  1: ['piece', LEN, (r, v) => r.string(v)],
  2: ['score', FIXED32, (r, v) => r.float(v)],
  3: ['type', VARINT, (r, v) => asInt32(v)],
};
const TRAINER_FIELDS = { // TrainerSpec
  3: ['modelType', VARINT, (r, v) => asInt32(v)],
  4: ['vocabSize', VARINT, (r, v) => asInt32(v)],
  24: ['treatWhitespaceAsSuffix', VARINT, (r, v) => asBool(v)],
  35: ['byteFallback', VARINT, (r, v) => asBool(v)],
  40: ['unkId', VARINT, (r, v) => asInt32(v)],
  41: ['bosId', VARINT, (r, v) => asInt32(v)],
  42: ['eosId', VARINT, (r, v) => asInt32(v)],
  43: ['padId', VARINT, (r, v) => asInt32(v)],
  44: ['unkSurface', LEN, (r, v) => r.string(v)],
  45: ['unkPiece', LEN, (r, v) => r.string(v)],
  46: ['bosPiece', LEN, (r, v) => r.string(v)],
  47: ['eosPiece', LEN, (r, v) => r.string(v)],
  48: ['padPiece', LEN, (r, v) => r.string(v)],
};
const NORMALIZER_FIELDS = { // NormalizerSpec
  1: ['name', LEN, (r, v) => r.string(v)],
  2: ['precompiledCharsmap', LEN, (r, [b, e]) => r.bytes.slice(b, e)],
  3: ['addDummyPrefix', VARINT, (r, v) => asBool(v)],
  4: ['removeExtraWhitespaces', VARINT, (r, v) => asBool(v)],
  5: ['escapeWhitespaces', VARINT, (r, v) => asBool(v)],
};

// proto2 defaults (sentencepiece_model.proto's [default = ...]): a field left out means these.
const PIECE_DEFAULTS = { piece: '', score: 0, type: PieceType.NORMAL };
const TRAINER_DEFAULTS = {
  modelType: 1, vocabSize: 8000, treatWhitespaceAsSuffix: false, byteFallback: false,
  unkId: 0, bosId: 1, eosId: 2, padId: -1, unkSurface: ' \u2047 ', // " ⁇ ": what decode shows for <unk>
  unkPiece: '<unk>', bosPiece: '<s>', eosPiece: '</s>', padPiece: '<pad>',
};
const NORMALIZER_DEFAULTS = {
  name: '', precompiledCharsmap: new Uint8Array(0), addDummyPrefix: true, removeExtraWhitespaces: true,
  escapeWhitespaces: true,
};

/** One message's known fields over its defaults; what names it in errors ("piece 12", "trainer_spec"). */
function readMessage(r, [start, end], table, defaults, what) {
  const out = { ...defaults };
  r.fields(start, end, (field, wire, value, at) => {
    const entry = table[field];
    if (!entry) return;
    const [name, wantWire, read] = entry;
    if (wire !== wantWire) throw r.fail(`${what}: field ${field} (${name}) has wire type ${wire}, not ${wantWire}`, at);
    out[name] = read(r, value);
  });
  return out;
}

/**
 * A .spm file's bytes -> the ModelProto's fields that encoding and decoding use:
 * { pieces: [{piece, score, type}], trainerSpec, normalizerSpec, denormalizerSpec (null if absent) }.
 * Throws a ModelError naming `file` when the bytes are not a well-formed protobuf.
 */
export function parseModelProto(bytes, file = 'model.spm') {
  if (bytes instanceof ArrayBuffer) bytes = new Uint8Array(bytes);
  if (!(bytes instanceof Uint8Array)) throw new TypeError(`${file}: expected the file's bytes (a `
    + 'Uint8Array or ArrayBuffer)');
  if (!bytes.length) throw new ModelError(file, 'the file is empty (0 bytes), not a SentencePiece model');
  const r = new ProtoReader(bytes, file);
  const seen = new Set();
  const model = { pieces: [], trainerSpec: { ...TRAINER_DEFAULTS }, normalizerSpec: { ...NORMALIZER_DEFAULTS },
    denormalizerSpec: null };
  r.fields(0, bytes.length, (field, wire, value, at) => {
    if (field >= 1 && field <= 5 && field !== 4 && wire !== LEN) {
      throw r.fail(`ModelProto field ${field} has wire type ${wire}, not a message`, at);
    }
    seen.add(field);
    if (field === 1) model.pieces.push(readMessage(r, value, PIECE_FIELDS, PIECE_DEFAULTS,
      `piece ${model.pieces.length}`));
    else if (field === 2) model.trainerSpec = readMessage(r, value, TRAINER_FIELDS, TRAINER_DEFAULTS, 'trainer_spec');
    else if (field === 3) model.normalizerSpec = readMessage(r, value, NORMALIZER_FIELDS, NORMALIZER_DEFAULTS,
      'normalizer_spec');
    else if (field === 5) model.denormalizerSpec = readMessage(r, value, NORMALIZER_FIELDS, NORMALIZER_DEFAULTS,
      'denormalizer_spec');
    // 4: self_test_data, samples the trainer checked; not needed to encode.
  });
  // spm writes pieces, trainer_spec and normalizer_spec in that order, always all three. protobuf
  // itself cannot tell a file cut between two fields from a whole one, so a missing part is the sign.
  const missing = [[1, 'pieces'], [2, 'trainer_spec'],
    [3, 'normalizer_spec']].filter(([f]) => !seen.has(f)).map(([, name]) => name);
  if (missing.length) {
    throw new ModelError(file, `not a complete SentencePiece model: it has no ${missing.join(', ')} (a truncated file, `
      + 'or not an .spm at all?)');
  }
  return model;
}

// ---- UTF-8, as sentencepiece's util.cc reads it ----

/**
 * The code point at bytes[pos] and its length, as string_util::DecodeUTF8: a malformed sequence (a
 * stray continuation byte, an overlong form, a surrogate, a cut-off character) is one byte long and
 * decodes to -1.
 */
function decodeUtf8At(bytes, pos) {
  const n = bytes.length - pos;
  const b0 = bytes[pos];
  if (b0 < 0x80) return [b0, 1];
  const trail = (k) => (bytes[pos + k] & 0xC0) === 0x80;
  const valid = (cp) => cp < 0xD800 || (cp >= 0xE000 && cp <= 0x10FFFF);
  if (n >= 2 && (b0 & 0xE0) === 0xC0) {
    const cp = ((b0 & 0x1F) << 6) | (bytes[pos + 1] & 0x3F);
    if (trail(1) && cp >= 0x80 && valid(cp)) return [cp, 2];
  } else if (n >= 3 && (b0 & 0xF0) === 0xE0) {
    const cp = ((b0 & 0x0F) << 12) | ((bytes[pos + 1] & 0x3F) << 6) | (bytes[pos + 2] & 0x3F);
    if (trail(1) && trail(2) && cp >= 0x800 && valid(cp)) return [cp, 3];
  } else if (n >= 4 && (b0 & 0xF8) === 0xF0) {
    const cp = ((b0 & 0x07) << 18) | ((bytes[pos + 1] & 0x3F) << 12) | ((bytes[pos + 2] & 0x3F) << 6) | (bytes[pos + 3] & 0x3F);
    if (trail(1) && trail(2) && trail(3) && cp >= 0x10000 && valid(cp)) return [cp, 4];
  }
  return [-1, 1];
}

// ---- 2. Normalisation (normalizer.cc) ----

/** A byte trie over UTF-8 strings, for the user-defined symbols (normalizer.cc's PrefixMatcher). */
function byteTrie(strings) {
  const root = new Map();
  for (const s of strings) {
    let node = root;
    for (const b of utf8Encoder.encode(s)) {
      if (!node.has(b)) node.set(b, new Map());
      node = node.get(b);
    }
    node.set('end', true);
  }
  return root;
}

export class Normalizer {
  /**
   * spec: a normalizerSpec from parseModelProto(). userDefined: the model's USER_DEFINED pieces,
   * which pass through unnormalised (spm sets them as the normaliser's prefix matcher).
   * file names the model in errors.
   */
  constructor(spec, userDefined = [], file = 'model.spm') {
    this.spec = spec;
    this.file = file;
    this.userTrie = userDefined.length ? byteTrie(userDefined) : null;
    this.trie = null; // the double array, one uint32 unit per entry
    this.replacements = null; // the NUL-terminated replacement strings the trie's values point into
    const blob = spec.precompiledCharsmap;
    if (blob.length) {
      // DecodePrecompiledCharsMap: uint32 (little-endian) trie size in bytes, the trie, the strings.
      if (blob.length <= 4) throw new ModelError(file, `the normaliser's charsmap is broken (${blob.length} bytes)`);
      const view = new DataView(blob.buffer, blob.byteOffset, blob.byteLength);
      const trieBytes = view.getUint32(0, true);
      if (trieBytes >= blob.length) {
        throw new ModelError(file, `the normaliser's charsmap is broken: its trie is ${trieBytes} bytes long, but the `
          + `charsmap only ${blob.length}`);
      }
      if (trieBytes < 4) throw new ModelError(file, `the normaliser's charsmap is broken: its trie is `
        + `${trieBytes} bytes long`);
      // set_array(..., size / unit_size): a trailing partial unit is ignored, as Darts does.
      this.trie = new Uint32Array(trieBytes >>> 2);
      for (let i = 0; i < this.trie.length; i++) this.trie[i] = view.getUint32(4 + 4 * i, true);
      this.replacements = blob.subarray(4 + trieBytes);
    }
  }

  /**
   * The longest rule in the charsmap that is a prefix of bytes[pos..]: [its length, the offset of its
   * replacement] or null. Darts-clone's commonPrefixSearch, one unit per node: a unit packs the label
   * (bits 0-7, bit 31 marks a leaf), has_leaf (bit 8), and the offset to the children (bits 10-31,
   * shifted left by 8 more when bit 9 is set). A leaf unit's value is its low 31 bits.
   */
  longestRule(bytes, pos) {
    const units = this.trie;
    const at = (i) => {
      if (i >= units.length) throw new ModelError(this.file, `the normaliser's charsmap is broken: its trie points at `
        + `unit ${i} of ${units.length}`);
      return units[i];
    };
    // Units are uint32 in C++: ">>> 0" keeps our int32 bit operations unsigned, as they wrap there.
    const offset = (u) => ((u >>> 10) << ((u & (1 << 9)) >>> 6)) >>> 0;
    let node = offset(at(0));
    let best = null;
    for (let i = pos; i < bytes.length; i++) {
      const label = bytes[i];
      node = (node ^ label) >>> 0;
      const unit = at(node);
      if ((unit & ((1 << 31) | 0xFF)) !== label) break; // a different label, or a leaf: no child here
      node = (node ^ offset(unit)) >>> 0;
      if ((unit >>> 8) & 1) best = [i + 1 - pos, at(node) & 0x7FFFFFFF]; // later matches are longer
    }
    return best;
  }

  /**
   * A NUL-terminated replacement string (a view into the charsmap), as C++ reads it with strlen; the
   * end of the charsmap ends the last one too (C++ finds the std::string's own NUL there).
   */
  replacement(offset) {
    const strings = this.replacements;
    if (offset > strings.length) throw new ModelError(this.file, `the normaliser's charsmap is broken: a replacement `
      + `at byte ${offset} of ${strings.length}`);
    let end = offset;
    while (end < strings.length && strings[end] !== 0) end++;
    return strings.subarray(offset, end);
  }

  /**
   * Normalizer::NormalizePrefix: what the input at pos becomes and how many bytes that consumes.
   * A user-defined symbol stays as typed; else the longest charsmap rule; else one character as it is
   * (one malformed byte -> U+FFFD).
   */
  normalizePrefix(bytes, pos) {
    if (this.userTrie) {
      let node = this.userTrie, longest = 0;
      for (let i = pos; i < bytes.length; i++) {
        node = node.get(bytes[i]);
        if (!node) break;
        if (node.has('end')) longest = i + 1 - pos;
      }
      if (longest) return [bytes.subarray(pos, pos + longest), longest];
    }
    if (this.trie) {
      const rule = this.longestRule(bytes, pos);
      if (rule) return [this.replacement(rule[1]), rule[0]];
    }
    const [cp, length] = decodeUtf8At(bytes, pos);
    if (cp < 0) return [REPLACEMENT_UTF8, 1];
    return [bytes.subarray(pos, pos + length), length];
  }

  /** Text -> the normalised text the pieces are matched against (Normalizer::Normalize). */
  normalize(text) {
    // TextEncoder writes a lone surrogate as U+FFFD. (Python cannot even pass one to spm: it refuses
    // to encode it as UTF-8.)
    const input = utf8Encoder.encode(text);
    const spec = this.spec;
    const isSpace = (sp) => sp.length === 1 && sp[0] === 0x20;
    let pos = 0;
    if (spec.removeExtraWhitespaces) { // leading whitespace: whatever normalises to exactly " "
      while (pos < input.length) {
        const [sp, consumed] = this.normalizePrefix(input, pos);
        if (!isSpace(sp)) break;
        pos += consumed;
      }
    }
    if (pos === input.length) return ''; // empty, or nothing but whitespace: no dummy prefix either

    const out = [];
    const pushSpace = () => (spec.escapeWhitespaces ? out.push(...SPACE_SYMBOL_UTF8) : out.push(0x20));
    // "world" and "hello world" become "▁world" and "▁hello▁world": the same piece for the same word.
    if (spec.addDummyPrefix) pushSpace();
    let isPrevSpace = spec.removeExtraWhitespaces; // so that whitespace right after the prefix goes too
    while (pos < input.length) {
      const [sp, consumed] = this.normalizePrefix(input, pos);
      let i = 0;
      if (isPrevSpace) while (i < sp.length && sp[i] === 0x20) i++; // collapse runs of spaces
      if (i < sp.length) {
        for (; i < sp.length; i++) {
          if (spec.escapeWhitespaces && sp[i] === 0x20) pushSpace();
          else out.push(sp[i]);
        }
        isPrevSpace = sp[sp.length - 1] === 0x20;
      }
      pos += consumed;
      if (!spec.removeExtraWhitespaces) isPrevSpace = false;
    }
    if (spec.removeExtraWhitespaces) { // trailing whitespace (also a "▁" typed at the end: as spm)
      const space = spec.escapeWhitespaces ? SPACE_SYMBOL_UTF8 : [0x20];
      const endsWithSpace = () => out.length >= space.length && space.every((b, k) => out[out.length - space.length + k] === b);
      while (endsWithSpace()) out.length -= space.length;
    }
    return utf8Decoder.decode(Uint8Array.from(out));
  }
}

// ---- 3. The unigram model ----

const BYTE_PIECE = /^<0x([0-9A-F]{2})>$/; // ByteToPiece writes "<0x%02X>"; PieceToByte accepts only that

/** "<0xE4>" -> 0xE4; anything else -> -1 (sentencepiece's PieceToByte). */
export function pieceToByte(piece) {
  const m = BYTE_PIECE.exec(piece);
  return m ? parseInt(m[1], 16) : -1;
}

export const byteToPiece = (b) => `<0x${b.toString(16).toUpperCase().padStart(2, '0')}>`;

export class SentencePieceModel {
  /**
   * proto: parseModelProto()'s result. file names the model in errors ("source.spm: ...").
   * Checks what ModelInterface::InitializePieces checks, with the file and the piece in the message.
   */
  constructor(proto, file = 'model.spm') {
    this.file = file;
    this.trainerSpec = proto.trainerSpec;
    this.normalizerSpec = proto.normalizerSpec;
    const modelType = proto.trainerSpec.modelType;
    if (modelType !== 1) {
      const name = MODEL_TYPES[modelType] ?? `model type ${modelType}`;
      throw new ModelError(file, `a ${name} SentencePiece model; only unigram models are read (as Marian's `
        + 'opus-mt models are)');
    }
    if (!proto.pieces.length) throw new ModelError(file, 'the model has no pieces');

    this.pieces = proto.pieces.map((p) => p.piece);
    this.scores = Float64Array.from(proto.pieces, (p) => p.score); // float32 values, held exactly
    this.types = Uint8Array.from(proto.pieces, (p) => p.type);
    // Two maps, as spm: the pieces that text can match (NORMAL, USER_DEFINED, UNUSED), and the reserved
    // ones (CONTROL, UNKNOWN, BYTE) that only an id or an exact lookup reaches.
    this.pieceIds = new Map();
    this.reservedIds = new Map();
    this.unkId = -1;
    const userDefined = [];
    const bytesFound = new Set();
    proto.pieces.forEach(({ piece, type }, id) => {
      const where = `piece ${id} (${JSON.stringify(piece)})`;
      if (!piece) throw new ModelError(file, `piece ${id} is empty`);
      if (!(type >= 1 && type <= 6)) throw new ModelError(file, `${where} has type ${type}, which is none of NORMAL, `
        + 'UNKNOWN, CONTROL, USER_DEFINED, UNUSED, BYTE');
      const matchable = type === PieceType.NORMAL || type === PieceType.USER_DEFINED || type === PieceType.UNUSED;
      const map = matchable ? this.pieceIds : this.reservedIds;
      if (map.has(piece)) throw new ModelError(file, `${where} is already defined, as piece ${map.get(piece)}`);
      map.set(piece, id);
      if (type === PieceType.USER_DEFINED) userDefined.push(piece);
      if (type === PieceType.UNKNOWN) {
        if (this.unkId >= 0) throw new ModelError(file, `${where} is a second unknown piece (the first is `
          + `piece ${this.unkId})`);
        this.unkId = id;
      }
      if (type === PieceType.BYTE) {
        if (!proto.trainerSpec.byteFallback) throw new ModelError(file, `${where} is a byte piece, but `
          + 'byte_fallback is off');
        const b = pieceToByte(piece);
        if (b < 0) throw new ModelError(file, `${where} is a byte piece not written <0xNN>`);
        bytesFound.add(b);
      }
    });
    if (this.unkId < 0) throw new ModelError(file, 'the model has no unknown piece (type UNKNOWN, usually <unk>)');
    if (proto.trainerSpec.byteFallback && bytesFound.size !== 256) {
      throw new ModelError(file, `byte_fallback is on but only ${bytesFound.size} of the 256 byte pieces `
        + '<0x00>..<0xFF> are there');
    }

    // Scores as unigram::Model's constructor finds them: over NORMAL pieces, in float32. max starts at
    // FLT_MIN (the smallest positive float), so with the usual all-negative log probabilities the
    // max is 0 and a user-defined symbol scores 0 * length - 0.1.
    let min = 3.4028234663852886e38, max = FLT_MIN; // FLT_MAX, FLT_MIN
    proto.pieces.forEach(({ score, type }) => {
      if (type === PieceType.NORMAL) { min = Math.min(min, score); max = Math.max(max, score); }
    });
    if (min === 3.4028234663852886e38) min = 0;
    if (max === FLT_MIN) max = 0;
    this.minScore = min;
    this.maxScore = max;
    this.unkScore = Math.fround(min - UNK_PENALTY); // float - float in C++: a float

    // spm finds the pieces that start at a position by walking a trie of their UTF-8 bytes, shortest
    // first. We look up each prefix of the text, shortest first, up to the longest piece: the same
    // matches in the same order (pieces and text are whole characters), and one Map of the pieces
    // instead of a node per character (an opus-mt vocabulary has tens of thousands of pieces).
    this.maxPieceLength = 0; // UTF-16 units
    for (const piece of this.pieceIds.keys()) this.maxPieceLength = Math.max(this.maxPieceLength, piece.length);
    // A user-defined symbol's bonus depends on its length in UTF-8 bytes.
    this.utf8Lengths = new Map(userDefined.map((p) => [p, utf8Encoder.encode(p).length]));

    if (proto.trainerSpec.treatWhitespaceAsSuffix) {
      // "▁" at the end of pieces instead of the start: Marian never sets it; refuse rather than guess.
      throw new ModelError(file, 'treat_whitespace_as_suffix is set; only models that put "▁" before a word (as '
        + 'Marian\'s) are read');
    }
    this.normalizer = new Normalizer(proto.normalizerSpec, userDefined, file);
    // A denormalizer is applied to decoded text when the model carries one with rules (rare: trained
    // with --denormalization_rule_tsv); it never adds a prefix or touches whitespace.
    const d = proto.denormalizerSpec;
    this.denormalizer = d && d.precompiledCharsmap.length ? new Normalizer(d, [], file) : null;
  }

  /** A .spm file's bytes -> the model; errors name `file`. */
  static fromBytes(bytes, file = 'model.spm') {
    return new SentencePieceModel(parseModelProto(bytes, file), file);
  }

  get size() { return this.pieces.length; }

  /** The id of a piece (reserved pieces first, as spm), or the unknown piece's id. */
  pieceToId(piece) {
    return this.reservedIds.get(piece) ?? this.pieceIds.get(piece) ?? this.unkId;
  }

  idToPiece(id) {
    this.checkId(id);
    return this.pieces[id];
  }

  checkId(id) {
    if (!Number.isInteger(id) || id < 0 || id >= this.pieces.length) {
      throw new RangeError(`${this.file}: invalid id ${id}: this model has ids 0..${this.pieces.length - 1}`);
    }
  }

  isControl(id) { return this.types[id] === PieceType.CONTROL; }
  isUnknown(id) { return this.types[id] === PieceType.UNKNOWN; }
  isByte(id) { return this.types[id] === PieceType.BYTE; }

  /** The text the pieces are matched against: normalised, "▁" for spaces. */
  normalize(text) {
    if (typeof text !== 'string') throw new TypeError(`normalize: expected a string, not ${typeof text}`);
    return this.normalizer.normalize(text);
  }

  /**
   * Viterbi over the normalised text (Model::EncodeOptimized): the segmentation with the best total
   * score, [[piece, id], ...]. One pass left to right, one character at a time: every piece that starts
   * here extends the best path that ends here. Scores are float32 in the C++ and the sums are rounded to
   * float32 when stored, so we round the same way: ties and near-ties then fall as they do in spm.
   */
  viterbi(normalized) {
    const s = normalized;
    const n = s.length; // UTF-16 units; every position we visit starts a character
    const bestScore = new Float64Array(n + 1); // float32 values
    const startsAt = new Int32Array(n + 1).fill(-1);
    const bestId = new Int32Array(n + 1);
    for (let start = 0; start < n;) {
      const tillHere = bestScore[start];
      const charLength = s.codePointAt(start) > 0xFFFF ? 2 : 1;
      let hasSingleCharPiece = false;
      for (let end = start; end < n && end - start < this.maxPieceLength;) {
        end += s.codePointAt(end) > 0xFFFF ? 2 : 1;
        const id = this.pieceIds.get(s.slice(start, end));
        if (id === undefined || this.types[id] === PieceType.UNUSED) continue; // UNUSED pieces are never output
        // A user-defined symbol gets a bonus so that it is always chosen: length (bytes) * max - 0.1,
        // computed in C++ as (float)(length * max_score_) - 0.1 (a double); a normal piece its score.
        const score = this.types[id] === PieceType.USER_DEFINED
          ? Math.fround(this.utf8Lengths.get(this.pieces[id]) * this.maxScore) - 0.1
          : this.scores[id];
        const candidate = score + tillHere; // a double, compared with the stored float as the C++ does
        if (startsAt[end] === -1 || candidate > bestScore[end]) {
          bestScore[end] = Math.fround(candidate);
          startsAt[end] = start;
          bestId[end] = id;
        }
        if (end - start === charLength) hasSingleCharPiece = true;
      }
      // No piece for this one character: it becomes the unknown piece, so that a path always exists.
      if (!hasSingleCharPiece) {
        const end = start + charLength;
        const candidate = Math.fround(this.unkScore + tillHere); // float + float
        if (startsAt[end] === -1 || candidate > bestScore[end]) {
          bestScore[end] = candidate;
          startsAt[end] = start;
          bestId[end] = this.unkId;
        }
      }
      start += charLength;
    }
    const result = [];
    for (let end = n; end > 0; end = startsAt[end]) result.push([s.slice(startsAt[end], end), bestId[end]]);
    return result.reverse();
  }

  /**
   * Text -> { pieces, ids }, as spm's EncodeAsPieces and EncodeAsIds. Consecutive unknown characters
   * are one piece (its text is the characters, its id the unknown id), as PopulateSentencePieceText
   * merges them; with byte_fallback they become one <0xNN> piece per UTF-8 byte instead.
   */
  encode(text) {
    const pieces = [], ids = [];
    let prevUnknown = false;
    for (const [piece, id] of this.viterbi(this.normalize(text))) {
      const unknown = id === this.unkId;
      if (unknown && this.trainerSpec.byteFallback) {
        for (const b of utf8Encoder.encode(piece)) {
          const bytePiece = byteToPiece(b);
          pieces.push(bytePiece);
          ids.push(this.pieceToId(bytePiece));
        }
      } else if (unknown && prevUnknown) {
        pieces[pieces.length - 1] += piece;
      } else {
        pieces.push(piece);
        ids.push(id);
      }
      prevUnknown = unknown;
    }
    return { pieces, ids };
  }

  encodeAsPieces(text) { return this.encode(text).pieces; }
  encodeAsIds(text) { return this.encode(text).ids; }

  /**
   * Pieces -> text (SentencePieceProcessor::Decode): "▁" -> " ", the "▁" that starts the text dropped
   * (the dummy prefix), control pieces (<s>, </s>) invisible, the unknown piece as " ⁇ " (the trainer's
   * unk_surface), a piece that is not in the model as it is, and runs of byte pieces put back together
   * as UTF-8 (a malformed byte -> U+FFFD).
   */
  decodePieces(pieces) {
    const ids = pieces.map((p) => this.pieceToId(p));
    let text = '';
    const dropFirstSpace = this.normalizerSpec.addDummyPrefix || this.normalizerSpec.removeExtraWhitespaces;
    let bytes = [];
    const flushBytes = () => {
      for (let pos = 0; pos < bytes.length;) {
        const [cp, length] = decodeUtf8At(bytes, pos);
        text += cp < 0 ? '\uFFFD' : String.fromCodePoint(cp);
        pos += length;
      }
      bytes = [];
    };
    for (let i = 0; i < pieces.length; i++) {
      const id = ids[i];
      if (this.isByte(id)) { bytes.push(pieceToByte(pieces[i])); continue; }
      flushBytes();
      text += this.decodePiece(pieces[i], id, text.length === 0 && dropFirstSpace);
    }
    flushBytes();
    return this.denormalizer ? this.denormalizer.normalize(text) : text;
  }

  /** One piece's text; atStart: drop a leading "▁" (nothing has been written yet). */
  decodePiece(piece, id, atStart) {
    if (this.isControl(id)) return '';
    if (this.isUnknown(id)) return this.pieces[id] === piece ? this.trainerSpec.unkSurface : piece;
    if (atStart && piece.startsWith(SPACE_SYMBOL)) piece = piece.slice(SPACE_SYMBOL.length);
    return piece.replaceAll(SPACE_SYMBOL, ' ');
  }

  /** Ids -> text, as spm's DecodeIds; an id outside the model throws a RangeError (as spm). */
  decodeIds(ids) {
    return this.decodePieces(ids.map((id) => this.idToPiece(id)));
  }
}

// ---- 4. Marian's tokenizer (Hugging Face's MarianTokenizer) ----

// Python's str.strip() whitespace (str.isspace): what HF strips off the decoded text. Not JS's trim(),
// which also strips U+FEFF and keeps U+001C..U+001F and U+0085.
const PY_STRIP = /^[\t\n\v\f\r\x1C-\x20\x85\xA0\u1680\u2000-\u200A\u2028\u2029\u202F\u205F\u3000]+|[\t\n\v\f\r\x1C-\x20\x85\xA0\u1680\u2000-\u200A\u2028\u2029\u202F\u205F\u3000]+$/g;
// ">>fr<<" at the start picks the target language in multilingual models; HF cuts every such code out
// before SentencePiece and keeps the first as a token of its own. Python's "." is any character but \n.
const LANGUAGE_CODE = />>[^\n]+<</g;
const LEADING_LANGUAGE_CODE = /^>>[^\n]+<</;

export const MARIAN_SPECIAL_TOKENS = Object.freeze(['</s>', '<unk>', '<pad>']);
// Typed special tokens are tokens, not text (HF's added tokens): split() with a capturing group keeps
// them at the odd indices.
const SPECIAL_TOKEN_SPLIT = /(<\/s>|<unk>|<pad>)/;

export class MarianTokenizer {
  /**
   * source, target: SentencePieceModels (source.spm, target.spm). vocab: vocab.json's object (piece ->
   * id) or its text. The model's ids are vocab.json's, not SentencePiece's: a piece is looked up there by
   * its text, and a piece vocab.json lacks is vocab.json's <unk>.
   */
  constructor(source, target, vocab) {
    if (!(source instanceof SentencePieceModel) || !(target instanceof SentencePieceModel)) {
      throw new TypeError('MarianTokenizer: source and target must be SentencePieceModels '
        + '(SentencePieceModel.fromBytes)');
    }
    this.source = source;
    this.target = target;
    this.vocab = readVocab(vocab);
    // id -> piece; where two pieces share an id the later one wins, as HF's {v: k for k, v in ...}
    // (later in JSON.parse's order, which puts integer-like keys such as "1" first; Marian's
    // vocabularies have no shared ids).
    this.tokens = new Map();
    for (const [piece, id] of this.vocab) this.tokens.set(id, piece);
    this.eosId = this.vocab.get('</s>');
    this.unkId = this.vocab.get('<unk>');
    this.padId = this.vocab.get('<pad>');
  }

  /** The three files' contents (bytes, bytes, text or object) -> a tokenizer; errors name the file. */
  static fromFiles(sourceSpm, targetSpm, vocabJson) {
    return new MarianTokenizer(
      SentencePieceModel.fromBytes(sourceSpm, 'source.spm'),
      SentencePieceModel.fromBytes(targetSpm, 'target.spm'),
      vocabJson,
    );
  }

  /** vocab.json's size: ids run 0..size-1 in Marian's vocabularies (<pad> last). */
  get size() { return this.vocab.size; }

  tokenToId(piece) { return this.vocab.get(piece) ?? this.unkId; }
  idToToken(id) { return this.tokens.get(id) ?? '<unk>'; }

  /**
   * Source text -> { tokens, ids } (pieces: the same as tokens) for the encoder, as HF's MarianTokenizer: "</s>", "<unk>", "<pad>"
   * typed in the text are tokens of their own; in each stretch between them a leading ">>xx<<" language
   * code is one token and the rest goes through source.spm; then "</s>" (build_inputs_with_special_tokens).
   * { target: true } uses target.spm instead (the decoder's side, for teacher forcing). HF's optional
   * Moses punctuation normalisation (only when sacremoses is installed) is not applied.
   */
  encode(text, { target = false } = {}) {
    if (typeof text !== 'string') throw new TypeError(`encode: expected a string, not ${typeof text}`);
    const spm = target ? this.target : this.source;
    const pieces = [];
    text.split(SPECIAL_TOKEN_SPLIT).forEach((part, i) => {
      if (i % 2 === 1) { pieces.push(part); return; }
      const code = LEADING_LANGUAGE_CODE.exec(part);
      if (code) pieces.push(code[0]);
      pieces.push(...spm.encodeAsPieces(part.replace(LANGUAGE_CODE, '')));
    });
    pieces.push('</s>');
    return { tokens: pieces, pieces, ids: pieces.map((p) => this.tokenToId(p)) };
  }

  /**
   * Target ids -> text, as HF's tokenizer.decode(ids, skip_special_tokens) (what translation code
   * prints, with true): ids -> vocab.json's pieces (an id it lacks -> "<unk>"); the special tokens
   * </s>, <pad> and <unk> dropped, or with skipSpecialTokens false written as they are, followed by a
   * space; the pieces between them decoded by target.spm (decodePieces: a piece target.spm lacks stays
   * as it is); then every "▁" left -> " ", and the ends stripped. HF's clean_up_tokenization_spaces
   * (which would join " ." and " ?" and so change French spacing) is not applied: the fixture's
   * tokenizer_config.json turns it off.
   */
  decode(ids, { skipSpecialTokens = true } = {}) {
    let out = '';
    let run = [];
    for (const id of ids) {
      const token = this.idToToken(id);
      if (MARIAN_SPECIAL_TOKENS.includes(token)) {
        if (skipSpecialTokens) continue;
        out += this.target.decodePieces(run) + token + ' ';
        run = [];
      } else {
        run.push(token);
      }
    }
    out += this.target.decodePieces(run);
    return out.replaceAll(SPACE_SYMBOL, ' ').replace(PY_STRIP, '');
  }
}

/** vocab.json (text or parsed) -> Map piece -> id, checked; errors name vocab.json. */
function readVocab(vocab) {
  let v = vocab;
  if (typeof v === 'string') {
    try {
      v = JSON.parse(v);
    } catch (e) {
      throw new Error(`vocab.json is not valid JSON: ${e.message}`);
    }
  }
  if (v === null || typeof v !== 'object' || Array.isArray(v)) {
    const what = Array.isArray(v) ? 'an array' : v === null ? 'null' : typeof v;
    throw new Error('vocab.json must be an object mapping each piece to its id ({"</s>": 0, "<unk>": 1, '
      + `...}), not ${what}`);
  }
  const map = v instanceof Map ? new Map(v) : new Map(Object.entries(v));
  for (const [piece, id] of map) {
    if (!Number.isInteger(id) || id < 0) {
      throw new Error(`vocab.json: the id of ${JSON.stringify(piece)} is ${JSON.stringify(id)}, not a `
        + 'non-negative integer');
    }
  }
  const missing = MARIAN_SPECIAL_TOKENS.filter((t) => !map.has(t));
  if (missing.length) {
    throw new Error(`vocab.json has no ${missing.map((t) => JSON.stringify(t)).join(', ')} (of ${map.size} pieces): `
      + 'Marian needs "</s>", "<unk>" and "<pad>"');
  }
  return map;
}
