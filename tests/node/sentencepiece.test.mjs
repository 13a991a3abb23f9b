// SentencePiece unigram (web/tokenizers/sentencepiece.js, issue 14) against python3-sentencepiece 0.1.97,
// the C++ library Marian's tokenizer runs on: the same pieces, ids and decoded text on every sentence of
// tests/fixtures/spm/cases.json (written by tests/fixtures/make_spm_fixtures.py) with each of its models:
//   nmt_nfkc       as opus-mt's source.spm / target.spm (nmt_nfkc charsmap, dummy prefix, extra spaces out)
//   nmt_nfkc_raw   no dummy prefix, whitespace kept, user-defined symbols, an extra control symbol
//   identity       no charsmap, byte_fallback, a denormalizer
//   hand           pieces written by hand so that each rule of the search decides one sentence
//   hand_spaces    the same with escape_whitespaces false (spaces stay " ")
// and the same for random id sequences through DecodeIds. Then the rules by hand, the files that must be
// refused (truncated, corrupt, not a protobuf, not unigram) and a mutation fuzz of the reader, and
// MarianTokenizer (vocab.json ids, </s>, decoding, loading errors). When the Translation lab's fixture
// (tests/fixtures/marian_tiny/, make_marian_fixtures.py) is there, its source.spm / target.spm and
// spm_cases.json are checked the same way.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  SentencePieceModel, MarianTokenizer, parseModelProto, PieceType, SPACE_SYMBOL, pieceToByte, byteToPiece,
} from '../../web/tokenizers/sentencepiece.js';

const FIXTURES = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'fixtures');
const SPM = path.join(FIXTURES, 'spm');
const CASES = JSON.parse(readFileSync(path.join(SPM, 'cases.json'), 'utf8'));
const bytesOf = (file) => new Uint8Array(readFileSync(path.join(SPM, file)));
const MODELS = Object.fromEntries(Object.entries(CASES.models).map(([name, { file }]) => [name, SentencePieceModel.fromBytes(bytesOf(file), file)]));

const show = (s) => JSON.stringify(s).slice(0, 160);

/** A seeded PRNG (mulberry32), the same sequence on every machine. */
function mulberry32(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6D2B79F5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// ---- Parity with python3-sentencepiece ----

for (const [name, { file, sentences: key }] of Object.entries(CASES.models)) {
  const sentences = CASES[key];
  test(`SentencePiece vs python3-sentencepiece ${CASES.sentencepiece} [${name}]: ${sentences.length} sentences, EncodeAsPieces, EncodeAsIds, DecodeIds`, () => {
    const model = MODELS[name];
    const expected = CASES.encode[name];
    assert.equal(expected.length, sentences.length);
    let unknown = 0, bytePieces = 0, userDefined = 0, joinedNormalized = 0;
    sentences.forEach((s, i) => {
      const [pieces, ids, text] = expected[i];
      const got = model.encode(s);
      if (!model.trainerSpec.byteFallback) {
        // The pieces tile the normalised text: a normalisation bug shows here, apart from the search.
        assert.equal(model.normalize(s), pieces.join(''), `normalize ${show(s)}`);
        joinedNormalized++;
      }
      assert.deepEqual(got, { pieces, ids }, `${file}: encode ${show(s)}`);
      assert.equal(model.decodeIds(ids), text, `${file}: decodeIds of ${show(s)}`);
      unknown += ids.filter((id) => id === model.unkId).length;
      bytePieces += ids.filter((id) => model.isByte(id)).length;
      userDefined += ids.filter((id) => model.types[id] === PieceType.USER_DEFINED).length;
    });
    // What each model is there for does happen in its sentences.
    if (!name.startsWith('hand')) assert.ok(unknown + bytePieces > 50, `${name}: only ${unknown} unknown and ${bytePieces} byte pieces`);
    if (name === 'identity') assert.ok(bytePieces > 200, `only ${bytePieces} byte pieces`);
    if (name === 'nmt_nfkc_raw') assert.ok(userDefined >= 20, `only ${userDefined} user-defined pieces`);
    if (name.startsWith('hand')) assert.ok(userDefined >= 1, 'the user-defined "xy" never won');
    if (!model.trainerSpec.byteFallback) assert.equal(joinedNormalized, sentences.length);
  });

  test(`SentencePiece vs python3-sentencepiece ${CASES.sentencepiece} [${name}]: DecodeIds of ${CASES.decode[name].length} random id sequences (control, unknown, byte, user-defined pieces)`, () => {
    const model = MODELS[name];
    for (const [ids, text] of CASES.decode[name]) assert.equal(model.decodeIds(ids), text, `${file}: decodeIds ${show(ids)}`);
  });
}

test('the corpus: over 500 sentences, and the cases the issue lists each appear in it', () => {
  const sentences = CASES.sentences;
  assert.ok(sentences.length >= 500, `${sentences.length} sentences`);
  const all = sentences.join('\n');
  for (const [what, re] of [
    ['ASCII punctuation', /[.,;:!?()"'-]/], ['Unicode punctuation', /[«»—¿¡、。]/u], ['digits', /\d/],
    ['composed accents', /[éèàçïöüñ]/u], ['decomposed accents', /\p{L}\p{Mn}/u], ['fullwidth forms', /[\uFF01-\uFF5E]/u],
    ['halfwidth katakana', /[\uFF66-\uFF9F]/u], ['ligatures', /[\uFB00-\uFB06]/u], ['superscripts', /[²³¹⁰]/u],
    ['circled and roman numerals', /[\u2460-\u24FF\u2160-\u217F]/u], ['CJK', /\p{Script=Han}/u], ['kana', /\p{Script=Hiragana}/u],
    ['Hangul', /\p{Script=Hangul}/u], ['Greek', /\p{Script=Greek}/u], ['Cyrillic', /\p{Script=Cyrillic}/u], ['Arabic', /\p{Script=Arabic}/u],
    ['Devanagari', /\p{Script=Devanagari}/u], ['Thai', /\p{Script=Thai}/u], ['Hebrew', /\p{Script=Hebrew}/u], ['emoji', /\p{Extended_Pictographic}/u],
    ['tabs', /\t/], ['newlines', /\n/], ['NBSP', /\u00A0/], ['U+3000', /\u3000/], ['zero width', /\u200B/], ['controls', /[\u0001-\u0008]/],
    ['repeated spaces', / {2}/], ['a typed ▁', /\u2581/u],
  ]) assert.match(all, re, what);
  assert.ok(sentences.includes(''), 'the empty string');
  assert.ok(sentences.some((s) => s.length && !s.trim()), 'a sentence of whitespace only');
  assert.ok(sentences.some((s) => /^\s/.test(s)) && sentences.some((s) => /\s$/.test(s)), 'leading and trailing whitespace');
  const nfkc = sentences.filter((s) => s.normalize('NFKC') !== s).length;
  assert.ok(nfkc >= 100, `only ${nfkc} sentences that NFKC changes`);
});

// ---- The rules, by hand ----

test('normalisation (nmt_nfkc): NFKC by the charsmap, whitespace trimmed and collapsed, "▁" for spaces and as the dummy prefix', () => {
  const m = MODELS.nmt_nfkc;
  assert.equal(m.normalize('Hello world'), '▁Hello▁world');
  assert.equal(m.normalize('  Hello \t\u3000 world\u00A0 '), '▁Hello▁world'); // tab, U+3000, NBSP are spaces
  assert.equal(m.normalize('ＡＢＣ１２３'), '▁ABC123'); // fullwidth -> ASCII
  assert.equal(m.normalize('ﬁne'), '▁fine'); // ligature
  assert.equal(m.normalize('cafe\u0301'), '▁café'); // decomposed -> composed
  assert.equal(m.normalize('x²'), '▁x2');
  assert.equal(m.normalize('zero\u200Bwidth'), '▁zero▁width'); // nmt_nfkc makes U+200B a space
  assert.equal(m.normalize('soft\u00ADhyphen'), '▁soft\u00ADhyphen'); // but keeps the soft hyphen
  assert.equal(m.normalize(''), '');
  assert.equal(m.normalize(' \t\u3000 '), ''); // whitespace only: not even the dummy prefix
  assert.equal(m.normalize('a ▁'), '▁a'); // a typed "▁" at the end goes with the trailing spaces (as spm)
  const raw = MODELS.nmt_nfkc_raw; // add_dummy_prefix false, remove_extra_whitespaces false
  assert.equal(raw.normalize('  Hello  world '), '▁▁Hello▁▁world▁');
  assert.equal(raw.normalize('ＡＢ<sep>ＡＢ'), 'AB<sep>AB'); // user-defined symbols pass through unnormalised
  const id = MODELS.identity; // no charsmap: only whitespace handling
  assert.equal(id.normalize(' ＡＢ  c '), '▁ＡＢ▁c');
  assert.equal(id.normalize('\uFEFFx'), '▁\uFEFFx'); // a BOM is a character, not something to drop
  assert.equal(MODELS.hand_spaces.normalize('  ab  c '), ' ab c'); // escape_whitespaces false: no "▁"
});

test('Viterbi (hand.spm): best total score; ties go to the earlier start; float32 sums decide near-ties; unknown runs merge', () => {
  const m = MODELS.hand;
  const pieces = (s) => m.encodeAsPieces(s);
  assert.deepEqual(pieces('ab'), ['▁ab']); // ▁ab (-4.5) ties ▁ + ab (-1 - 3.5): the piece that starts first stays
  assert.deepEqual(pieces('abc'), ['▁', 'a', 'bc']); // -6 beats ▁ab c (-7) and ▁ ab c (-7)
  // In exact arithmetic ▁ tu v (-2 - 2^-26) beats ▁ t uv (-2 - 2^-25). But spm stores each best path in
  // float32: ▁ t becomes -1, so ▁ t uv is -2, and ▁ tu v, reaching the end later, is not better than
  // that. spm keeps ▁ t uv, and so do we (summing in doubles would flip it).
  assert.deepEqual(pieces('tuv'), ['▁', 't', 'uv']);
  // The user-defined "xy" scores 0 * 2 - 0.1 (max_score is 0: the normal scores are all negative);
  // ▁x + y (-1.05) beats ▁ + xy (-1.1): the bonus counts inside the search, it does not override it.
  assert.deepEqual(pieces('xy'), ['▁x', 'y']);
  assert.deepEqual(pieces('qxy'), ['▁', 'q', 'xy']); // after an unknown q, xy (-0.1) beats x y (-2)
  // "zz" is UNUSED: never output; its two characters are unknown and merge into one piece.
  assert.deepEqual(m.encode('zz'), { pieces: ['▁', 'zz'], ids: [3, 0] });
  assert.deepEqual(m.encode('zqz a'), { pieces: ['▁', 'zqz', '▁', 'a'], ids: [3, 0, 3, 4] });
  assert.equal(m.decodeIds([3, 0, 3, 4]), ' ⁇  a'); // <unk> decodes as the trainer's unk_surface
  assert.equal(m.minScore, -4.5);
  assert.equal(m.maxScore, 0);
  assert.equal(m.unkScore, -14.5);
});

test('byte fallback (identity.spm): an unknown character -> one <0xNN> piece per UTF-8 byte; decoding puts them back together', () => {
  const m = MODELS.identity;
  const { pieces, ids } = m.encode('ह'); // U+0939, not in the training corpus
  assert.deepEqual(pieces, ['▁', '<0xE0>', '<0xA4>', '<0xB9>']);
  assert.deepEqual(ids.map((id) => m.idToPiece(id)), pieces);
  assert.equal(m.decodeIds(ids), 'ह');
  const b = (x) => m.pieceToId(byteToPiece(x));
  assert.equal(m.decodeIds([b(0xE4), b(0xB8)]), '\uFFFD\uFFFD'); // a cut-off character: U+FFFD per byte
  assert.equal(m.decodeIds([b(0x41), b(0xC3), b(0xA9)]), 'Aé');
  assert.equal(pieceToByte('<0x0A>'), 10);
  assert.equal(pieceToByte('<0x0a>'), -1); // spm writes and reads only upper case
  assert.equal(byteToPiece(10), '<0x0A>');
  // The denormalizer rewrites decoded text ("--" -> "—", "'" -> "’").
  assert.deepEqual(m.encodeAsPieces("a--b'c"), ['▁', 'a', '-', '-', 'b', "'", 'c']);
  assert.equal(m.decodeIds(m.encodeAsIds("a--b'c")), 'a—b’c');
});

test('decoding: "▁" -> space, the first one dropped, controls invisible, pieces the model lacks kept as they are', () => {
  const m = MODELS.nmt_nfkc;
  assert.equal(m.decodePieces(['▁the', '▁cat']), 'the cat');
  assert.equal(m.decodePieces(['</s>', '▁the', '<s>', '▁cat', '</s>']), 'the cat'); // </s> writes nothing, so ▁the starts the text
  assert.equal(m.decodePieces(['▁zzqq▁x', '▁the']), '▁zzqq▁x the'); // unknown to the model: raw, ▁ and all, even first (as spm)
  assert.equal(m.decodePieces(['<unk>', '▁the']), ' ⁇  the');
  assert.equal(m.decodePieces([]), '');
  // No dummy prefix and whitespace kept: a leading "▁" was a typed space, and decoding keeps it.
  const raw = MODELS.nmt_nfkc_raw;
  assert.deepEqual(raw.encodeAsPieces(' the  cat '), ['▁', 't', 'h', 'e', '▁', '▁', 'c', 'at', '▁']);
  assert.equal(raw.decodeIds(raw.encodeAsIds(' the  cat ')), ' the  cat ');
  assert.throws(() => m.decodeIds([m.size]), { name: 'RangeError', message: /nmt_nfkc\.spm: invalid id 1000: this model has ids 0\.\.999/ });
  assert.throws(() => m.decodeIds([-1]), RangeError);
  assert.throws(() => m.decodeIds([1.5]), RangeError);
});

test('the model\'s metadata: sizes, special ids, piece lookup', () => {
  const m = MODELS.nmt_nfkc;
  assert.equal(m.size, 1000);
  assert.deepEqual([m.unkId, m.pieceToId('<s>'), m.pieceToId('</s>')], [0, 1, 2]);
  assert.equal(m.idToPiece(0), '<unk>');
  assert.equal(m.pieceToId('no such piece'), 0);
  assert.ok(m.isControl(1) && m.isControl(2) && m.isUnknown(0));
  assert.equal(MODELS.identity.trainerSpec.padId, 3);
  assert.equal(m.trainerSpec.padId, -1); // a negative int32: a 10-byte varint in the file
  assert.equal(m.normalizerSpec.name, 'nmt_nfkc');
  assert.equal(SPACE_SYMBOL, '\u2581');
});

// ---- Files that are not (whole) unigram models ----

// A minimal protobuf writer, for models the trainer cannot make.
const utf8 = (s) => [...new TextEncoder().encode(s)];
function varint(n) {
  let v = BigInt.asUintN(64, BigInt(n));
  const out = [];
  do {
    const b = Number(v & 0x7Fn);
    v >>= 7n;
    out.push(v ? b | 0x80 : b);
  } while (v);
  return out;
}
/** A field: a number or boolean as a varint, { f32 } as a fixed32 float, a string or bytes length-delimited. */
function field(number, value) {
  if (value?.f32 !== undefined) return [...varint(number * 8 + 5), ...new Uint8Array(new Float32Array([value.f32]).buffer)];
  if (typeof value === 'number' || typeof value === 'boolean') return [...varint(number * 8), ...varint(Number(value))];
  const bytes = typeof value === 'string' ? utf8(value) : value;
  return [...varint(number * 8 + 2), ...varint(bytes.length), ...bytes];
}
const piece = (p, score, type = PieceType.NORMAL) => field(1, [...field(1, p), ...field(2, { f32: score }), ...field(3, type)]);
const BASIC_PIECES = [piece('<unk>', 0.5, PieceType.UNKNOWN), piece('▁', -1.5), piece('a', -2.5)];
function modelBytes({ pieces = BASIC_PIECES, trainer = [], normalizer = [] } = {}) {
  return Uint8Array.from([...pieces.flat(), ...field(2, trainer), ...field(3, normalizer)]);
}

test('a hand-written ModelProto reads back; the protobuf writer above agrees with the reader', () => {
  const proto = parseModelProto(modelBytes({ trainer: [...field(43, -1), ...field(35, false)], normalizer: field(3, false) }), 'x.spm');
  assert.deepEqual(proto.pieces, [{ piece: '<unk>', score: 0.5, type: 2 }, { piece: '▁', score: -1.5, type: 1 }, { piece: 'a', score: -2.5, type: 1 }]);
  assert.equal(proto.trainerSpec.padId, -1);
  assert.equal(proto.normalizerSpec.addDummyPrefix, false);
  assert.equal(proto.normalizerSpec.removeExtraWhitespaces, true); // proto2 default
  const m = new SentencePieceModel(proto, 'x.spm');
  assert.deepEqual(m.encode('aa b'), { pieces: ['a', 'a', '▁', 'b'], ids: [2, 2, 1, 0] });
});

test('only unigram: a BPE model (bpe.spm, from the trainer), WORD and CHAR models -> an Error naming the file', () => {
  assert.throws(() => SentencePieceModel.fromBytes(bytesOf('bpe.spm'), 'source.spm'),
    { name: 'ModelError', message: 'source.spm: a BPE SentencePiece model; only unigram models are read (as Marian\'s opus-mt models are)' });
  assert.throws(() => SentencePieceModel.fromBytes(modelBytes({ trainer: field(3, 3) }), 'target.spm'), { message: /^target\.spm: a WORD SentencePiece model; only unigram/ });
  assert.throws(() => SentencePieceModel.fromBytes(modelBytes({ trainer: field(3, 4) }), 'm.spm'), { message: /^m\.spm: a CHAR SentencePiece model/ });
  assert.throws(() => SentencePieceModel.fromBytes(modelBytes({ trainer: field(3, 9) }), 'm.spm'), { message: /^m\.spm: a model type 9 SentencePiece model/ });
  assert.ok(SentencePieceModel.fromBytes(modelBytes({ trainer: field(3, 1) }), 'm.spm')); // UNIGRAM, written out
  assert.ok(SentencePieceModel.fromBytes(modelBytes(), 'm.spm')); // UNIGRAM is the default
});

test('not a protobuf: empty, JSON, PNG, ZIP, a safetensors file, random bytes -> an Error naming the file', () => {
  assert.throws(() => SentencePieceModel.fromBytes(new Uint8Array(0), 'source.spm'), { message: 'source.spm: the file is empty (0 bytes), not a SentencePiece model' });
  assert.throws(() => SentencePieceModel.fromBytes(Uint8Array.from(utf8('{"</s>": 0}')), 'source.spm'), { message: /^source\.spm: not a SentencePiece model: at byte 0 of 11, field 15 has wire type 3, which a SentencePiece model never uses/ });
  assert.throws(() => SentencePieceModel.fromBytes(Uint8Array.from([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]), 'a.spm'), { message: /^a\.spm: not a SentencePiece model: / });
  assert.throws(() => SentencePieceModel.fromBytes(Uint8Array.from([0x50, 0x4B, 0x03, 0x04, 0x14, 0, 0, 0]), 'a.spm'), { message: /^a\.spm: / });
  assert.throws(() => SentencePieceModel.fromBytes(new Uint8Array(readFileSync(path.join(FIXTURES, 'adam.safetensors'))), 'a.spm'), { message: /^a\.spm: / });
  assert.throws(() => SentencePieceModel.fromBytes('text', 'a.spm'), TypeError);
  const rand = mulberry32(14);
  for (let k = 0; k < 300; k++) {
    const bytes = Uint8Array.from({ length: 1 + Math.floor(rand() * 400) }, () => Math.floor(rand() * 256));
    assert.throws(() => SentencePieceModel.fromBytes(bytes, 'random.spm'), { name: 'ModelError', message: /^random\.spm: / }, `random file ${k}`);
  }
});

test('truncated: nmt_nfkc.spm cut anywhere -> an Error naming the file (never a hang, never a partial model)', () => {
  const full = bytesOf('nmt_nfkc.spm');
  const cuts = [];
  for (let n = 0; n < 3000; n++) cuts.push(n); // the pieces
  for (let n = 3000; n < full.length - 64; n += 1999) cuts.push(n); // trainer_spec, the charsmap
  for (let n = full.length - 64; n < full.length; n++) cuts.push(n); // the end of the normaliser spec
  for (const n of cuts) {
    assert.throws(() => SentencePieceModel.fromBytes(full.subarray(0, n), 'source.spm'), { name: 'ModelError', message: /^source\.spm: / }, `cut at ${n}`);
  }
  // The messages say what is wrong: a cut inside a field, or one between fields that leaves a part out.
  assert.throws(() => SentencePieceModel.fromBytes(full.subarray(0, full.length - 1), 'source.spm'), { message: /^source\.spm: not a SentencePiece model: at byte \d+ of \d+, field 3 \(\d+ bytes\) runs past the end \(a truncated or corrupt file\?\)$/ });
  const firstPiece = 2 + full[1]; // tag, one-byte length, the piece
  assert.throws(() => SentencePieceModel.fromBytes(full.subarray(0, firstPiece), 'source.spm'), { message: 'source.spm: not a complete SentencePiece model: it has no trainer_spec, normalizer_spec (a truncated file, or not an .spm at all?)' });
});

test('corrupt models: duplicate, empty and mistyped pieces, no <unk>, bad byte pieces, a broken charsmap -> Errors naming the file and the piece', () => {
  const refuse = (options, re) => assert.throws(() => SentencePieceModel.fromBytes(modelBytes(options), 'source.spm'), { message: re });
  refuse({ pieces: [piece('a', -1)] }, /^source\.spm: the model has no unknown piece/);
  refuse({ pieces: [...BASIC_PIECES, piece('<unk2>', 0, PieceType.UNKNOWN)] }, /^source\.spm: piece 3 \("<unk2>"\) is a second unknown piece \(the first is piece 0\)/);
  refuse({ pieces: [...BASIC_PIECES, piece('a', -3)] }, /^source\.spm: piece 3 \("a"\) is already defined, as piece 2/);
  refuse({ pieces: [...BASIC_PIECES, piece('', -3)] }, /^source\.spm: piece 3 is empty/);
  refuse({ pieces: [...BASIC_PIECES, piece('b', -3, 7)] }, /^source\.spm: piece 3 \("b"\) has type 7/);
  refuse({ pieces: [...BASIC_PIECES, piece('<0x41>', 0, PieceType.BYTE)] }, /^source\.spm: piece 3 \("<0x41>"\) is a byte piece, but byte_fallback is off/);
  refuse({ pieces: [...BASIC_PIECES, piece('<0x4g>', 0, PieceType.BYTE)], trainer: field(35, true) }, /is a byte piece not written <0xNN>/);
  refuse({ pieces: [...BASIC_PIECES, piece('<0x41>', 0, PieceType.BYTE)], trainer: field(35, true) }, /^source\.spm: byte_fallback is on but only 1 of the 256 byte pieces/);
  refuse({ pieces: [] }, /^source\.spm: not a complete SentencePiece model: it has no pieces/);
  refuse({ trainer: field(24, true) }, /^source\.spm: treat_whitespace_as_suffix is set/);
  refuse({ pieces: [field(1, field(1, 7))] }, /^source\.spm: not a SentencePiece model: at byte 2 of \d+, piece 0: field 1 \(piece\) has wire type 0, not 2/);
  // The charsmap: a size word claiming more than there is; a trie that points outside itself.
  const charsmap = (bytes) => ({ normalizer: field(2, Uint8Array.from(bytes)) });
  refuse(charsmap([1, 2, 3]), /^source\.spm: the normaliser's charsmap is broken \(3 bytes\)/);
  refuse(charsmap([200, 0, 0, 0, 1, 2]), /^source\.spm: the normaliser's charsmap is broken: its trie is 200 bytes long, but the charsmap only 6/);
  const wild = SentencePieceModel.fromBytes(modelBytes(charsmap([4, 0, 0, 0, 0xFF, 0xFF, 0xFF, 0xFF, 0])), 'source.spm'); // one unit, offset far away
  assert.throws(() => wild.encode('a'), { message: /^source\.spm: the normaliser's charsmap is broken: its trie points at unit \d+ of 1/ });
});

test('fuzz: 1,000 mutations of identity.spm and 60 of nmt_nfkc.spm -> a model that encodes and decodes, or a ModelError; nothing else', () => {
  const rand = mulberry32(2024);
  const texts = ['The cat sat on the mat.', ' ＦＵＬＬ  ﬁ café\u0301 中文 😀 ', 'a--b\'c @@ <sep>'];
  let loaded = 0, refused = 0;
  const tryModel = (bytes, file) => {
    let m;
    try {
      m = SentencePieceModel.fromBytes(bytes, file);
    } catch (e) {
      assert.equal(e.name, 'ModelError', `${file}: ${e.stack}`);
      assert.ok(e.message.startsWith(`${file}: `), e.message);
      refused++;
      return;
    }
    loaded++;
    for (const t of texts) {
      try {
        const { pieces, ids } = m.encode(t);
        assert.equal(pieces.length, ids.length);
        assert.equal(typeof m.decodeIds(ids), 'string');
      } catch (e) {
        assert.equal(e.name, 'ModelError', `${file}: ${e.stack}`); // a broken charsmap shows only when used
      }
    }
  };
  const mutate = (full, region) => {
    const bytes = full.slice();
    const kind = rand();
    if (kind < 0.7) { // flip a few bytes
      for (let k = 1 + Math.floor(rand() * 4); k > 0; k--) bytes[region[0] + Math.floor(rand() * (region[1] - region[0]))] = Math.floor(rand() * 256);
      return bytes;
    }
    const at = region[0] + Math.floor(rand() * (region[1] - region[0]));
    const n = 1 + Math.floor(rand() * 8);
    if (kind < 0.85) { // delete n bytes
      const out = new Uint8Array(Math.max(at, bytes.length - n));
      out.set(bytes.subarray(0, at));
      out.set(bytes.subarray(at + n), at);
      return out;
    }
    const out = new Uint8Array(bytes.length + n); // insert n random bytes
    out.set(bytes.subarray(0, at));
    for (let k = 0; k < n; k++) out[at + k] = Math.floor(rand() * 256);
    out.set(bytes.subarray(at), at + n);
    return out;
  };
  const identity = bytesOf('identity.spm');
  for (let k = 0; k < 1000; k++) tryModel(mutate(identity, [0, identity.length]), 'identity.spm');
  // nmt_nfkc: mutate the charsmap's trie and strings (the file's tail), where lookups follow offsets.
  const nfkc = bytesOf('nmt_nfkc.spm');
  for (let k = 0; k < 60; k++) tryModel(mutate(nfkc, [nfkc.length - 240000, nfkc.length]), 'nmt_nfkc.spm');
  assert.ok(loaded > 200 && refused > 200, `loaded ${loaded}, refused ${refused}: the mutations should reach both`);
});

// ---- MarianTokenizer ----

/** A vocab.json as Marian's: </s> 0, <unk> 1, the pieces (every 7th left out unless `all`), <pad> last. */
function marianVocab(model, all = false) {
  const vocab = { '</s>': 0, '<unk>': 1 };
  let id = 2;
  model.pieces.forEach((p, i) => {
    if ((i % 7 === 3 && !all) || p in vocab || model.isControl(i) || model.isUnknown(i)) return;
    vocab[p] = id++;
  });
  vocab['<pad>'] = id;
  return vocab;
}

test(`MarianTokenizer: source pieces through vocab.json (a piece it lacks -> its <unk>), </s> appended; ${CASES.sentences.length} sentences`, () => {
  const spm = MODELS.nmt_nfkc;
  const vocab = marianVocab(spm);
  const tok = new MarianTokenizer(spm, MODELS.nmt_nfkc_raw, JSON.stringify(vocab));
  assert.deepEqual([tok.eosId, tok.unkId, tok.padId, tok.size], [0, 1, Object.keys(vocab).length - 1, Object.keys(vocab).length]);
  let missing = 0;
  // Typed special tokens are split out before SentencePiece: their own test is below.
  for (const s of CASES.sentences.filter((t) => !/<\/s>|<unk>|<pad>/.test(t))) {
    const pieces = spm.encodeAsPieces(s);
    const ids = pieces.map((p) => (p in vocab ? vocab[p] : 1));
    missing += pieces.filter((p) => !(p in vocab)).length;
    assert.deepEqual(tok.encode(s), { tokens: [...pieces, '</s>'], pieces: [...pieces, '</s>'], ids: [...ids, 0] }, show(s));
    // The target side: target.spm's pieces through the same vocabulary.
    assert.deepEqual(tok.encode(s, { target: true }).pieces, [...MODELS.nmt_nfkc_raw.encodeAsPieces(s), '</s>']);
  }
  assert.ok(missing > 100, `only ${missing} pieces missing from vocab.json`);
  assert.deepEqual(tok.encode(''), { tokens: ['</s>'], pieces: ['</s>'], ids: [0] });
});

test('MarianTokenizer: a leading ">>fr<<" language code is one token; every code is cut out of the text (as HF)', () => {
  const spm = MODELS.nmt_nfkc;
  const tok = new MarianTokenizer(spm, spm, { ...marianVocab(spm), '>>fr<<': 5000 });
  const { pieces, ids } = tok.encode('>>fr<< the cat');
  assert.deepEqual(pieces, ['>>fr<<', ...spm.encodeAsPieces(' the cat'), '</s>']);
  assert.equal(ids[0], 5000);
  assert.deepEqual(tok.encode('the >>de<< cat').pieces, [...spm.encodeAsPieces('the  cat'), '</s>']); // no code token: not at the start
  assert.equal(tok.encode('>>xx<< a').ids[0], 1); // a code vocab.json lacks is <unk>
});

test('MarianTokenizer: "</s>", "<unk>", "<pad>" typed in the text are tokens of their own (HF\'s added tokens), never SentencePiece\'s', () => {
  const spm = MODELS.nmt_nfkc;
  const tok = new MarianTokenizer(spm, spm, { ...marianVocab(spm), '>>fr<<': 5000 });
  const { pieces, ids } = tok.encode('the cat</s> sat <pad><unk>');
  assert.deepEqual(pieces, [...spm.encodeAsPieces('the cat'), '</s>', ...spm.encodeAsPieces(' sat '), '<pad>', '<unk>', '</s>']);
  assert.equal(ids[pieces.indexOf('</s>')], 0);
  assert.deepEqual(ids.slice(-3), [tok.padId, 1, 0]);
  // A language code counts at the start of each stretch between special tokens, as HF's _tokenize sees them.
  assert.deepEqual(tok.encode('<unk>>>fr<< a').pieces, ['<unk>', '>>fr<<', ...spm.encodeAsPieces(' a'), '</s>']);
  assert.deepEqual(tok.encode('</S>').pieces, [...spm.encodeAsPieces('</S>'), '</s>']); // case-sensitive
});

test('MarianTokenizer.decode: target ids -> text; </s>, <pad>, <unk> dropped (HF skip_special_tokens), or kept literally', () => {
  const target = MODELS.nmt_nfkc;
  const vocab = marianVocab(target, true);
  const tok = new MarianTokenizer(MODELS.nmt_nfkc_raw, target, vocab);
  const words = (s) => tok.encode(s, { target: true }).ids.slice(0, -1); // without </s>
  assert.ok(!words('the cat').includes(1) && !words('sat').includes(1)); // all in vocab.json
  const ids = [...words('the cat'), 1, ...words('sat'), 0, tok.padId, tok.padId];
  assert.equal(tok.decode(ids), 'the cat sat');
  assert.equal(tok.decode(ids, { skipSpecialTokens: false }), 'the cat<unk> sat</s> <pad> <pad>'); // HF: the token, then a space
  assert.equal(tok.decode([9999999]), ''); // an id vocab.json lacks is <unk>
  assert.equal(tok.decode([]), '');
  // Round trip: what the target side encodes decodes as target.spm decodes it (every piece in vocab.json).
  for (const s of ['The cat sat on the mat.', '  le   chat ', 'Größe über Müller']) {
    const enc = tok.encode(s, { target: true });
    assert.equal(tok.decode(enc.ids), target.decodePieces(target.encodeAsPieces(s)).trim(), s);
  }
  assert.equal(tok.idToToken(0), '</s>');
  assert.equal(tok.tokenToId('no such piece'), 1);
});

test('MarianTokenizer loading errors name the file: vocab.json not JSON, not an object, non-integer ids, missing specials; bad .spm files', () => {
  const spm = MODELS.nmt_nfkc;
  const make = (vocab) => () => new MarianTokenizer(spm, spm, vocab);
  assert.throws(make('{"</s>": 0,'), { message: /^vocab\.json is not valid JSON: / });
  assert.throws(make('[1, 2]'), { message: 'vocab.json must be an object mapping each piece to its id ({"</s>": 0, "<unk>": 1, ...}), not an array' });
  assert.throws(make('null'), /not null$/);
  assert.throws(make('"text"'), /not string$/);
  assert.throws(make({ '</s>': 0, '<unk>': 1, '<pad>': 2, '▁a': '3' }), { message: 'vocab.json: the id of "▁a" is "3", not a non-negative integer' });
  assert.throws(make({ '</s>': 0, '<unk>': 1, '<pad>': 2, '▁a': 1.5 }), /the id of "▁a" is 1\.5/);
  assert.throws(make({ '</s>': 0, '<unk>': 1, '<pad>': -2 }), /the id of "<pad>" is -2/);
  assert.throws(make({ '<unk>': 0, '▁a': 1 }), { message: 'vocab.json has no "</s>", "<pad>" (of 2 pieces): Marian needs "</s>", "<unk>" and "<pad>"' });
  assert.throws(() => new MarianTokenizer(bytesOf('nmt_nfkc.spm'), spm, {}), TypeError);
  const vocab = JSON.stringify(marianVocab(spm));
  const good = bytesOf('nmt_nfkc.spm');
  assert.throws(() => MarianTokenizer.fromFiles(bytesOf('bpe.spm'), good, vocab), { message: /^source\.spm: a BPE SentencePiece model/ });
  assert.throws(() => MarianTokenizer.fromFiles(good, good.subarray(0, 100), vocab), { message: /^target\.spm: not a SentencePiece model/ });
  assert.ok(MarianTokenizer.fromFiles(good, good.buffer.slice(good.byteOffset, good.byteOffset + good.byteLength), vocab)); // an ArrayBuffer is fine
});

// ---- The Translation lab's tiny Marian (tests/fixtures/make_marian_fixtures.py) ----

const MARIAN = path.join(FIXTURES, 'marian_tiny');
const SPM_CASES = path.join(FIXTURES, 'spm_cases.json');
const haveMarian = ['source.spm', 'target.spm', 'vocab.json'].every((f) => existsSync(path.join(MARIAN, f))) && existsSync(SPM_CASES);

test('marian_tiny: source.spm / target.spm / vocab.json reproduce spm_cases.json (python3-sentencepiece and the Marian ids)', { skip: haveMarian ? false : 'tests/fixtures/marian_tiny/ and spm_cases.json not written yet (make_marian_fixtures.py)' }, () => {
  const read = (f) => new Uint8Array(readFileSync(path.join(MARIAN, f)));
  const tok = MarianTokenizer.fromFiles(read('source.spm'), read('target.spm'), readFileSync(path.join(MARIAN, 'vocab.json'), 'utf8'));
  const cases = JSON.parse(readFileSync(SPM_CASES, 'utf8'));
  checkMarianCases(tok, cases);
});

/**
 * spm_cases.json (make_marian_fixtures.py) against ours: per text, each side's EncodeAsPieces,
 * EncodeAsIds and (every tenth) DecodeIds, and the source's Marian ids; then target.spm's DecodePieces.
 */
function checkMarianCases(tok, cases) {
  let compared = 0;
  for (const { text, source, target } of cases.cases) {
    for (const [side, spm, want] of [['source', tok.source, source], ['target', tok.target, target]]) {
      assert.deepEqual(spm.encode(text), { pieces: want.pieces, ids: want.ids }, `${side}.spm: encode ${show(text)}`);
      if (want.decoded !== undefined) assert.equal(spm.decodeIds(want.ids), want.decoded, `${side}.spm: decodeIds of ${show(text)}`);
    }
    // The fixture maps the pieces of the whole text; HF (and we) first take a leading ">>xx<<" out as a
    // language code, so for such texts the ids differ by design (checked by hand above).
    if (/^>>[^\n]+<</.test(text)) continue;
    assert.deepEqual(tok.encode(text), { tokens: [...source.pieces, '</s>'], pieces: [...source.pieces, '</s>'], ids: source.marian_ids }, `Marian ids of ${show(text)}`);
    assert.deepEqual(tok.encode(text, { target: true }).pieces, [...target.pieces, '</s>']);
    compared++;
  }
  assert.ok(compared >= 500, `only ${compared} cases`);
  for (const { pieces, text } of cases.decode_pieces) assert.equal(tok.target.decodePieces(pieces), text, `target.spm: decodePieces ${show(pieces)}`);
}
