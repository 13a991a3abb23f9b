// The Translation lab's Marian through the WASM module (issue 14): the tiny opus-mt-shaped checkpoint of
// tests/fixtures/make_marian_fixtures.py streamed from disk, tokenized by web/tokenizers/sentencepiece.js,
// on every build and CPU backend: the source ids, the encoder, the teacher-forced decoder (logits and
// every attention) and generate()'s greedy and beam-search ids with their cross-attention, against the
// plain PyTorch Marian (1e-4; generated ids identical). Then bad folders, files and inputs, with messages.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, mkdtempSync, copyFileSync, writeFileSync, rmSync, truncateSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { BUILDS, lab, fixture, FIXTURES, maxAbsDiff, crc32, openFolder, pickFiles } from './support.mjs';
import { folderSources } from '../../web/cli/file_source.mjs';
import { parseSafetensors } from '../../web/io/safetensors.js';

const ref = fixture('marian_tiny_reference.safetensors');
const meta = parseSafetensors(readFileSync(path.join(FIXTURES, 'marian_tiny_reference.safetensors'))).metadata;
const FOLDER = path.join(FIXTURES, 'marian_tiny');
const SENTENCES = JSON.parse(meta.sentences);
const TOL = 1e-4;
const concat = (arrays) => Float32Array.from(arrays.flatMap((a) => Array.from(a)));
const close = (ours, key, what) => {
  const diff = maxAbsDiff(ours, ref[key].data);
  assert.ok(diff <= TOL, `${what} ${key}: max |ours - torch| = ${diff}`);
};

for (const build of BUILDS) {
  test(`Marian: source ids, encoder, teacher-forced decoder, greedy and beam search match PyTorch [${build}]`, async () => {
    const module = await lab(build);
    const { model: marian, tokenizer } = await openFolder(module, await folderSources(FOLDER), 'translation');
    try {
      const c = marian.config;
      for (const s of SENTENCES) {
        const { ids, pieces } = tokenizer.encode(meta[`${s}.source_text`]);
        assert.deepEqual(pieces.slice(0, -1), JSON.parse(meta[`${s}.source_pieces`]), `${s}: source pieces`);
        assert.deepEqual(Array.from(ids), Array.from(ref[`${s}.input_ids`].data), `${s}: source ids`);
        for (const backend of module.cpuBackends) {
          const what = `${build} ${backend} ${s}`;
          marian.encode(ids, { backend });
          close(concat([...Array(c.encoderLayers).keys()].map((l) => marian.encoderAttention(l))), `${s}.encoder_attentions`, what);
          marian.decode(ref[`${s}.decoder_input_ids`].data, { backend });
          close(marian.logits(), `${s}.logits`, what);
          close(concat([...Array(c.decoderLayers).keys()].map((l) => marian.decoderAttention(l))), `${s}.decoder_attentions`, what);
          close(concat([...Array(c.decoderLayers).keys()].map((l) => marian.crossAttention(l))), `${s}.cross_attentions`, what);
          for (const [kind, beams] of [['greedy', 1], ['beam', c.numBeams]]) {
            const g = marian.generate({ beams, backend });
            assert.deepEqual(g.ids, Array.from(ref[`${s}.${kind}.ids`].data), `${what}: ${kind} ids`);
            close(concat(g.cross), `${s}.${kind}.cross_attentions`, `${what} ${kind}`);
            if (kind === 'beam') assert.ok(Math.abs(g.score - ref[`${s}.beam.score`].data[0]) <= TOL, `${what}: beam score`);
            assert.equal(tokenizer.decode(g.ids), meta[`${s}.${kind}.text`], `${what}: ${kind} text`);
          }
        }
      }
    } finally {
      marian.delete();
    }
  });
}

test('beam search reports the beams and their scores at every step, as PyTorch ranks them', async () => {
  const module = await lab('simd');
  const { model: marian, tokenizer } = await open();
  const s = SENTENCES[0];
  marian.encode(tokenizer.encode(meta[`${s}.source_text`]).ids);
  const g = marian.generate({ beams: 4 });
  const steps = ref[`${s}.beam.step_scores`];
  const [n, B] = steps.shape;
  assert.ok(g.steps.length >= 1 && g.steps.length <= n);
  for (let i = 0; i < g.steps.length; i++) {
    const want = Array.from(steps.data.subarray(i * B, (i + 1) * B));
    const tokens = Array.from(ref[`${s}.beam.step_tokens`].data.subarray(i * B, (i + 1) * B));
    assert.deepEqual(g.steps[i].beams.map((b) => b.at(-1)), tokens, `step ${i}: each beam's last token`);
    g.steps[i].scores.forEach((x, b) => assert.ok(Math.abs(x - want[b]) <= TOL, `step ${i} beam ${b}: ${x} vs ${want[b]}`));
  }
  marian.delete();
  async function open() { return openFolder(module, await folderSources(FOLDER), 'translation'); }
});

function tempCopy(edit, files = ['config.json', 'source.spm', 'target.spm', 'vocab.json', 'model.safetensors']) {
  const dir = mkdtempSync(path.join(tmpdir(), 'attnlab-marian-'));
  for (const f of files) copyFileSync(path.join(FOLDER, f), path.join(dir, f));
  edit(dir);
  return dir;
}

test('bad folders, files and inputs are named; the module keeps working', async () => {
  const module = await lab('simd');
  await assert.rejects(pickFiles('marian', [{ name: 'config.json' }, { name: 'pytorch_model.bin' }]), { name: 'CheckpointError', message: 'A Marian (opus-mt) checkpoint needs '
    + 'config.json, source.spm, target.spm, vocab.json, and model.safetensors or pytorch_model.bin; missing source.spm; target.spm; vocab.json (given: config.json, pytorch_model.bin).' });
  await assert.rejects(pickFiles('marian', ['config.json', 'source.spm', 'target.spm', 'vocab.json', 'model.bin'].map((name) => ({ name }))),
    /; missing model\.safetensors or pytorch_model\.bin \(given: config\.json, source\.spm, target\.spm, vocab\.json, model\.bin\)\.$/);
  const rejects = async (edit, pattern) => {
    const dir = tempCopy(edit);
    await assert.rejects(openFolder(module, await folderSources(dir), 'translation'), pattern);
    rmSync(dir, { recursive: true });
  };
  await rejects((dir) => writeFileSync(path.join(dir, 'config.json'), '{"model_type": "bert"}'), /^CheckpointError: This folder holds a BERT model \(config\.json's model_type is "bert"\), not a Marian \(opus-mt\) one: open it in the Pretrained lab\.$/);
  await rejects((dir) => {
    const f = path.join(dir, 'config.json');
    writeFileSync(f, readFileSync(f, 'utf8').replace('"d_model": 32', '"d_model": 48'));
  }, /model\.safetensors: tensor "model\.shared\.weight" has shape \[649, 32\] but config\.json \(d_model 48, vocab_size 649, ffn 64\/64\) needs \[649, 48\]/);
  await rejects((dir) => {
    const f = path.join(dir, 'model.safetensors');
    const b = readFileSync(f);
    writeFileSync(f, b.subarray(0, b.length - 100));
  }, /^AttnLabError: model\.safetensors: tensor "[^"]+" data_offsets \[\d+, \d+\] lie outside the \d+-byte data section$/);
  await rejects((dir) => writeFileSync(path.join(dir, 'source.spm'), 'not a model'), /source\.spm/);
  await rejects((dir) => writeFileSync(path.join(dir, 'vocab.json'), '[1, 2]'), /vocab\.json/);
  const { model: marian, tokenizer } = await openFolder(module, await folderSources(FOLDER), 'translation');
  assert.throws(() => marian.encode([0, 5000]), /source ids: token id 5000 at position 1 is outside the vocabulary \[0, 649\)/);
  assert.throws(() => marian.encode(new Array(65).fill(5)), /source ids has 65 tokens: this model has positions for 64/);
  assert.throws(() => marian.generate({ beams: 4 }), /encode\(\) first/);
  assert.throws(() => marian.decoderAttention(0), /no decoder attention: encode\(\) \(and decode\(\)\) first/);
  marian.encode(tokenizer.encode('The cat sat on the mat.').ids);
  assert.throws(() => marian.generate({ beams: 0 }), /beams must be in \[1, 16\]/);
  assert.ok(marian.generate({ beams: 1 }).ids.length > 1, 'the model still translates');
  marian.delete();
});

// ---- pytorch_model.bin through the streamed path (module.loadMarian({format: 'bin'}): raw_marian.cpp's
// TorchCheckpointReader asks for the end records, the central directory, local headers and data.pkl;
// then each planned tensor's byte range, strides and offsets honoured). The fixture's .bin has views of
// one storage, a transposed weight, an offset view and the embeddings shared under four names.

const CONFIG = readFileSync(path.join(FOLDER, 'config.json'), 'utf8');
const BIN = new Uint8Array(readFileSync(path.join(FOLDER, 'pytorch_model.bin')));
const SAFETENSORS = new Uint8Array(readFileSync(path.join(FOLDER, 'model.safetensors')));
const HOSTILE = path.join(FIXTURES, 'torch_bin', 'hostile');

/** module.loadMarian on bytes in memory; `reads` collects every [offset, length] asked for. */
function loadBytes(module, bytes, { format = 'bin', chunkBytes, config = CONFIG, reads, onProgress } = {}) {
  return module.loadMarian({
    config, size: bytes.length, format, chunkBytes, onProgress,
    read: async (offset, length) => {
      reads?.push([offset, length]);
      return bytes.slice(offset, offset + length);
    },
  });
}

/** Everything the lab shows, for every sentence and CPU backend: logits, attentions, generate()'s ids and cross-attention. */
function everything(module, marian) {
  const out = [];
  const c = marian.config;
  for (const s of SENTENCES) {
    for (const backend of module.cpuBackends) {
      marian.encode(ref[`${s}.input_ids`].data, { backend });
      marian.decode(ref[`${s}.decoder_input_ids`].data, { backend });
      out.push(marian.logits(), ...[...Array(c.decoderLayers).keys()].map((l) => marian.crossAttention(l)),
        ...[...Array(c.decoderLayers).keys()].map((l) => marian.decoderAttention(l)),
        ...[...Array(c.encoderLayers).keys()].map((l) => marian.encoderAttention(l)));
      for (const beams of [1, c.numBeams]) {
        const g = marian.generate({ beams, backend });
        out.push(Int32Array.from(g.ids), Float32Array.of(g.score), ...g.cross);
      }
    }
  }
  return out;
}

const sameBits = (a, b, what) => {
  assert.equal(a.length, b.length, `${what}: as many arrays`);
  a.forEach((x, i) => assert.ok(Buffer.from(x.buffer, x.byteOffset, x.byteLength).equals(Buffer.from(b[i].buffer, b[i].byteOffset, b[i].byteLength)),
    `${what}: array ${i} differs`));
};

// The data range of an archive entry (its local header's name and extra field skipped), and the CRC-32
// the central directory stores for it.
function zipEntry(bytes, name) {
  const v = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const wanted = new TextEncoder().encode(name);
  for (let at = 0; at + 46 <= bytes.length; at++) {
    if (v.getUint32(at, true) !== 0x02014b50 || v.getUint16(at + 28, true) !== wanted.length) continue;
    if (!Buffer.from(bytes.subarray(at + 46, at + 46 + wanted.length)).equals(Buffer.from(wanted))) continue;
    const local = v.getUint32(at + 42, true);
    const begin = local + 30 + v.getUint16(local + 26, true) + v.getUint16(local + 28, true);
    return { begin, end: begin + v.getUint32(at + 24, true), crc: v.getUint32(at + 16, true), record: at };
  }
  throw new Error(`no entry ${name}`);
}

const hex = (x) => `0x${x.toString(16).padStart(8, '0')}`;

for (const build of BUILDS) {
  test(`Marian from pytorch_model.bin, streamed in 1000-byte slices, computes what model.safetensors does, bit for bit [${build}]`, async () => {
    const module = await lab(build);
    const reads = [];
    const fromBin = await loadBytes(module, BIN, { chunkBytes: 1000, reads });
    const fromSafetensors = await loadBytes(module, SAFETENSORS, { format: 'safetensors' });
    try {
      assert.equal(fromBin.summary.file, 'pytorch_model.bin');
      assert.equal(fromSafetensors.summary.file, 'model.safetensors');
      assert.equal(fromBin.summary.parameters, fromSafetensors.summary.parameters);
      sameBits(everything(module, fromBin), everything(module, fromSafetensors), build);
      // The embeddings' tied names are skipped, and their one storage (archive/data/1) is read once.
      for (const tied of ['model.encoder.embed_tokens.weight', 'model.decoder.embed_tokens.weight', 'lm_head.weight']) {
        assert.ok(fromBin.summary.skipped.includes(tied), tied);
      }
      const shared = zipEntry(BIN, 'archive/data/1');
      // (The reads that start in it: the local header read just before it may run a few bytes into it.)
      const sharedRead = reads.filter(([o]) => o >= shared.begin && o < shared.end).reduce((n, [o, l]) => n + Math.min(l, shared.end - o), 0);
      assert.equal(sharedRead, shared.end - shared.begin, 'the shared embeddings are read once');
      // Longer than a slice: only the tail, the central directory and data.pkl.
      assert.equal(reads.filter(([, l]) => l > 1000).length, 3, 'the tensors in slices of 1000 bytes');
    } finally {
      fromBin.delete();
      fromSafetensors.delete();
    }
  });
}

test('a folder with both weights files reads model.safetensors; with only pytorch_model.bin, that; the summary says which', async () => {
  const module = await lab('simd');
  const both = await openFolder(module, await folderSources(FOLDER), 'translation');
  assert.equal(both.summary.file, 'model.safetensors');
  assert.deepEqual(both.files, ['config.json', 'source.spm', 'target.spm', 'vocab.json', 'model.safetensors']);
  const dir = tempCopy(() => {}, ['config.json', 'source.spm', 'target.spm', 'vocab.json', 'pytorch_model.bin']);
  const bin = await openFolder(module, await folderSources(dir), 'translation');
  rmSync(dir, { recursive: true });
  assert.equal(bin.summary.file, 'pytorch_model.bin');
  assert.deepEqual(bin.files, ['config.json', 'source.spm', 'target.spm', 'vocab.json', 'pytorch_model.bin']);
  const ids = bin.tokenizer.encode(meta['cat.source_text']).ids;
  for (const m of [both.model, bin.model]) m.encode(ids);
  assert.deepEqual(bin.model.generate({ beams: 4 }), both.model.generate({ beams: 4 }));
  both.model.delete();
  bin.model.delete();
});

test('malformed pytorch_model.bin files through the streamed path: each exact message; a failed open leaves the heap where it was', async () => {
  const module = await lab('simd');
  const allowlist = ': only collections.OrderedDict, torch._utils._rebuild_tensor_v2 and the storage types may appear; nothing is called';
  const refusal = async (bytes, options) => {
    try {
      (await loadBytes(module, bytes, options)).delete();
    } catch (error) {
      assert.ok(error instanceof module.AttnLabError, String(error?.stack ?? error));
      return error.message;
    }
    return 'loaded';
  };
  // One failure first, so that whatever the module allocates once (Embind's tables) is counted before.
  await refusal(new Uint8Array(3));
  const heap = module.heapBytesInUse();
  const pkl = zipEntry(BIN, 'archive/data.pkl');
  const damaged = BIN.slice();
  damaged[pkl.begin + 100] ^= 0x20;
  const noEnd = (n) => `pytorch_model.bin: no end of central directory record in its last ${n} bytes: the file is cut short, or not a ZIP archive `
    + '(checkpoints saved by PyTorch before 1.6 are not: load it in Python and save it again with PyTorch >= 1.6, or convert it to model.safetensors)';
  const cases = [
    [BIN.subarray(0, 150000), {}, noEnd(65633)],
    [new Uint8Array(readFileSync(path.join(HOSTILE, 'global_os_system.bin'))), {},
      `pytorch_model.bin: entry "archive/data.pkl", byte 2: the pickle names os.system${allowlist}`],
    [damaged, {}, `pytorch_model.bin: entry "archive/data.pkl" fails its CRC-32 check (stored ${hex(pkl.crc)}, computed ${hex(crc32(damaged.subarray(pkl.begin, pkl.end)))}): the file is damaged`],
    [BIN, { config: CONFIG.replace('"d_model": 32', '"d_model": 48') },
      'pytorch_model.bin: tensor "model.shared.weight" has shape [649, 32] but config.json (d_model 48, vocab_size 649, ffn 64/64) needs [649, 48]'],
    [BIN, { config: CONFIG.replace('"encoder_layers": 2', '"encoder_layers": 3') },
      'pytorch_model.bin has no tensor "model.encoder.layers.2.self_attn.q_proj.weight": is it a Marian checkpoint with config.json\'s 3 + 2 layers?'],
    [new Uint8Array(3), {}, 'pytorch_model.bin: not a ZIP archive: 3 bytes, fewer than the 22 of an end of central directory record'],
    [BIN, { format: 'zip' }, 'format must be \'safetensors\' or \'bin\' (or the file\'s name), got "zip"'],
    [BIN, { chunkBytes: 0 }, 'chunkBytes must be at least 1, got 0'],
  ];
  for (const [bytes, options, message] of cases) {
    assert.equal(await refusal(bytes, options), message);
    assert.equal(module.heapBytesInUse(), heap, `${message}: the heap is where it was`);
  }

  // A file that shrinks while it is read: during the index, and (on disk, truncated once the first
  // slice of a tensor has arrived) between two slices of a tensor.
  let calls = 0;
  await assert.rejects(module.loadMarian({ config: CONFIG, size: BIN.length, format: 'bin',
    read: async (offset, length) => (++calls < 3 ? BIN.slice(offset, offset + length) : BIN.slice(offset, offset + Math.floor(length / 2))) }),
  (error) => {
    assert.match(error.message, /^pytorch_model\.bin: could read only \d+ of \d+ bytes of its index \(at offset \d+\) \(was the file changed while it was read\?\)$/);
    return true;
  });
  const dir = mkdtempSync(path.join(tmpdir(), 'attnlab-marian-bin-'));
  const file = path.join(dir, 'pytorch_model.bin');
  writeFileSync(file, BIN);
  const source = (await folderSources(dir))[0];
  await assert.rejects(module.loadMarian({ config: CONFIG, size: source.size, read: source.read, format: 'pytorch_model.bin', chunkBytes: 1000,
    onProgress: () => truncateSync(file, 0) }),
  { name: 'AttnLabError', message: 'pytorch_model.bin: could read only 0 of 1000 bytes of tensor "model.shared.weight" (was the file changed while it was read?)' });
  rmSync(dir, { recursive: true });
  assert.equal(module.heapBytesInUse(), heap, 'the heap is where it was after the shrinking files');

  const marian = await loadBytes(module, BIN, { chunkBytes: 4096 });
  assert.equal(marian.summary.file, 'pytorch_model.bin', 'the module still loads the real file');
  marian.delete();
});
