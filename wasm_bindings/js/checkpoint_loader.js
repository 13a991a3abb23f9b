// The one streamed loader every checkpoint kind shares (loadCheckpoint; core/models/raw_checkpoint.h), for
// the kinds of the registry (core/models/model_kinds.h), each made into its JS class: Bert (and DistilBERT,
// a Bert: bert_model.js), Marian (marian_model.js) and the decoders (GPT-2 and the rest: decoder_model.js).
// checkpointModels(mod) binds them to one loaded module.
import { AttnLabError, check, checkInteger } from './checks.js';
import { Bert } from './bert_model.js';
import { Marian } from './marian_model.js';
import { Decoder } from './decoder_model.js';
import { readExactly, readRanges } from './checkpoint_reads.js';

// The weights formats a load takes, by their names and by their files' names.
const WEIGHT_FORMATS = { safetensors: 'safetensors', 'model.safetensors': 'safetensors', bin: 'bin', 'pytorch_model.bin': 'bin' };

export function checkpointModels(mod) {
  // The registry's rows (core/models/model_kinds.h): each kind names the binding that loads it, whose
  // raw class and JS class are these.
  const MODEL_KINDS = JSON.parse(mod._model_kinds());
  const BINDINGS = {
    bert: { Raw: (kind) => new mod._RawBert(kind), make: (raw) => new Bert(raw) },
    marian: { Raw: () => new mod._RawMarian(), make: (raw) => new Marian(raw) },
    decoder: { Raw: (kind) => new mod._RawDecoder(kind), make: (raw, row) => new Decoder(raw, row.title) },
  };
  const CHECKPOINT_KINDS = Object.fromEntries(MODEL_KINDS.map((row) => [row.kind, {
    Raw: () => BINDINGS[row.binding].Raw(row.kind), make: (raw) => BINDINGS[row.binding].make(raw, row) }]));

  /**
   * Loads a checkpoint of a registered kind ('bert', 'distilbert', 'marian') tensor by tensor, so that a 440 MB file
   * is never held twice: config is config.json's text; size the bytes of the weights file, in format
   * 'safetensors' (model.safetensors, the default) or 'bin' (pytorch_model.bin; the file names work
   * too); read(offset, length) resolves to those bytes as a Uint8Array (a File's slice, a file handle's
   * read, a Hub download's range). A sharded checkpoint gives index (model.safetensors.index.json's text)
   * and shards [{name, size, read}] in place of size and read: every shard's header is read and checked
   * against the index (core/io/safetensors_shards.h), then each tensor from its shard. onProgress({bytes, total, tensor}). The loader asks for the byte
   * ranges of the file's index (raw_checkpoint.h), checks every tensor against config.json, then reads
   * only the tensors the model uses. Throws an AttnLabError naming the file and the tensor; nothing of
   * a failed load is kept.
   */
  async function loadCheckpoint(kind, { config, size, read, index, shards, onProgress = () => {}, chunkBytes = 16 * 1024 * 1024, format = 'safetensors' }) {
    if (!Object.hasOwn(CHECKPOINT_KINDS, kind)) throw new AttnLabError(`kind must be ${Object.keys(CHECKPOINT_KINDS).join(' or ')}, got ${JSON.stringify(kind)}`);
    const weights = Object.hasOwn(WEIGHT_FORMATS, format) ? WEIGHT_FORMATS[format] : null;
    if (!weights) throw new AttnLabError(`format must be 'safetensors' or 'bin' (or the file's name), got ${JSON.stringify(format)}`);
    checkInteger('chunkBytes', chunkBytes, { min: 1 });
    if (shards !== undefined && (!Array.isArray(shards) || weights !== 'safetensors' || typeof index !== 'string')) {
      throw new AttnLabError('a sharded checkpoint is {index: model.safetensors.index.json\'s text, shards: [{name, size, read}]}, in format \'safetensors\'');
    }
    const raw = CHECKPOINT_KINDS[kind].Raw();
    try {
      // The weights files, in the order the loader counts them (_index_file(), _load(i).file).
      let files;
      if (shards) {
        check(raw._open_sharded(String(config), index, Object.fromEntries(shards.map((s) => [String(s.name), Number(s.size)]))));
        const byName = new Map(shards.map((s) => [String(s.name), s]));
        files = raw._file_names().map((name) => ({ name, read: byName.get(name).read }));
      } else {
        check(raw._open(String(config), Number(size), weights));
        files = [{ name: weights === 'bin' ? 'pytorch_model.bin' : 'model.safetensors', read }];
      }
      for (let ranges = raw._index_reads(); ranges.length; ranges = raw._index_reads()) {
        const { name, read: readFile } = files[raw._index_file()];
        check(raw._index_give(await readRanges(readFile, ranges, name)));
      }
      check(raw._plan());
      const loads = Array.from({ length: raw._load_count() }, (_, i) => raw._load(i));
      const total = loads.reduce((sum, l) => sum + l.end - l.begin, 0);
      let bytes = 0;
      for (const [i, load] of loads.entries()) {
        for (let at = load.begin; at < load.end; at += chunkBytes) {
          const length = Math.min(chunkBytes, load.end - at);
          const { name, read: readFile } = files[load.file];
          check(raw._write(i, await readExactly(readFile, at, length, name, `tensor "${load.fileName}"`), at - load.begin));
          bytes += length;
          onProgress({ bytes, total, tensor: load.fileName });
        }
        check(raw._store(i));
      }
      check(raw._finish());
      return CHECKPOINT_KINDS[kind].make(raw);
    } catch (error) {
      raw.delete();
      throw error;
    }
  }

  /**
   * A kind's check of config.json's text alone -> '' or what is wrong, the memory a model needs when it does
   * not fit included (core/models/model_memory.h, the one rule): the Hub clients ask it before the weights.
   */
  function checkConfig(kind, config) {
    if (!Object.hasOwn(CHECKPOINT_KINDS, kind)) throw new AttnLabError(`kind must be ${Object.keys(CHECKPOINT_KINDS).join(' or ')}, got ${JSON.stringify(kind)}`);
    return mod._check_config(kind, String(config));
  }

  /**
   * What the core lacks for an architecture it knows and does not read, from config.json's text
   * ("Mistral's sliding-window attention (sliding_window 4096) is not read here"), or '' (core/models/config_json.h).
   */
  const unreadArchitecture = (config) => mod._unread_architecture(String(config));

  /** loadCheckpoint('bert', ...): a BERT from model.safetensors or pytorch_model.bin ({kind: 'distilbert'}: a DistilBERT). */
  const loadBert = ({ kind = 'bert', ...options }) => loadCheckpoint(kind, options);
  /** loadCheckpoint('marian', ...): a Marian (opus-mt) model from model.safetensors or pytorch_model.bin. */
  const loadMarian = (options) => loadCheckpoint('marian', options);

  return { Bert, Marian, Decoder, loadCheckpoint, checkConfig, unreadArchitecture, loadBert, loadMarian, modelKinds: MODEL_KINDS };
}
