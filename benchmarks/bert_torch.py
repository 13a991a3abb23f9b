#!/usr/bin/python3
"""PyTorch side of the BERT encoder speed benchmark (issue 13), and the files every side of it reads.

Builds a bert-base-uncased-shaped model (vocab 30522, hidden 768, 12 layers, 12 heads, intermediate
3072, 512 positions, 2 token types, eps 1e-12, GELU (erf); 110.1M parameters with the masked-LM head as
bert-base-uncased's checkpoint has it, 440 MB in fp32) with seeded random weights from
tests/fixtures/bert_reference.py, and writes into --out (skipped when a stamp says the folder already
holds this seed and shape):
  config.json, vocab.txt, tokenizer_config.json  a Hugging Face folder (vocab.txt has bert-base's special
                          ids: [PAD] 0, [unused0..98] 1-99, [UNK] 100, [CLS] 101, [SEP] 102, [MASK] 103; the
                          other 30,000-odd entries are synthetic words: only the ids matter here)
  model.safetensors       fp32, bert-base-uncased's layout: "bert." + embeddings.*, encoder.layer.N.*, pooler.*,
                          and cls.predictions.* (the decoder tied to the word embeddings, not stored)
  model.onnx              torch.onnx.export (opset 17) of the encoder (BertModel below; the pooler and the head are not
                          in its outputs, so not in the graph): inputs input_ids, token_type_ids (int64
                          [1, T], T dynamic); outputs last_hidden_state [1, T, E] and attentions.0 ..
                          attentions.{L-1} [1, H, T, T] (softmax probabilities), checked by onnx.checker
  ids_{T}.json            the fixed token ids for T tokens: [CLS], T-2 seeded ids in [1000, 30000), [SEP]
and on every run, for each T:
  ref_{T}.safetensors     bert_reference.bert_forward's outputs for ids_{T} (fp32, 1 thread):
                          last_hidden_state [1, T, E], attentions [L, 1, H, T, T], input_ids [1, T]
Then it times the forward of BertModel below (an nn.Module with Hugging Face's names and op order, the
model that was exported; eval, torch.no_grad, fp32, batch 1; checked against bert_forward first) at each
thread count of --threads: per (T, threads), --warmup forwards then --repeats timed ones; the median is
the figure. Prints one JSON line.

The weights: random_state_dict(config, seed, bias_std=0.02, layer_norm_std=0.02): matrices and embeddings
~ N(0, 0.02) as BERT's initializer_range, and biases ~ N(0, 0.02), LayerNorm weights 1 + N(0, 0.02) rather
than HF's zeros and ones, so that a forward that drops a bias or a LayerNorm affine fails the parity
check instead of passing by accident.

OMP_WAIT_POLICY is read when torch loads its OpenMP runtime: it is set to passive below before `import
torch` unless the environment already sets it (benchmarks/bert.mjs sets it in the child's environment).
Usage:
  /usr/bin/python3 benchmarks/bert_torch.py [--out /tmp/attnlab-bert-base] [--tokens 32,128] [--repeats 5]
      [--threads 1,2] [--warmup 2] [--seed 0] [--opset 17] [--small] [--no-time]
  --small: hidden 128, 2 layers, 2 heads, intermediate 512 (same vocabulary and ids), for checking the
  harness quickly; its default --out is /tmp/attnlab-bert-small.
"""
import os

os.environ.setdefault("OMP_WAIT_POLICY", "passive")  # before torch loads libgomp  # noqa: E402

import argparse
import json
import math
import statistics
import struct
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

GENERATOR = "benchmarks/bert_torch.py"
STAMP = "attnlab_bench_stamp.json"
CLS, SEP = 101, 102

# The shared plain-PyTorch reference (config, random weights, the forward op for op as HF's, HF folders).
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "fixtures"))
from bert_reference import bert_config, bert_forward, random_state_dict, write_hf_folder  # noqa: E402

BASE = bert_config()  # bert-base-uncased's config.json
SMALL = bert_config(hidden_size=128, num_hidden_layers=2, num_attention_heads=2, intermediate_size=512)


class BertSelfAttention(nn.Module):
    """Names as Hugging Face's BertAttention: self.{query,key,value}, output.{dense,LayerNorm}."""

    def __init__(self, c):
        super().__init__()
        E = c["hidden_size"]
        self.query, self.key, self.value = nn.Linear(E, E), nn.Linear(E, E), nn.Linear(E, E)


class BertSelfOutput(nn.Module):
    def __init__(self, c, inner):
        super().__init__()
        self.dense = nn.Linear(inner, c["hidden_size"])
        self.LayerNorm = nn.LayerNorm(c["hidden_size"], eps=c["layer_norm_eps"])


class BertAttention(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.self = BertSelfAttention(c)
        self.output = BertSelfOutput(c, c["hidden_size"])


class BertIntermediate(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.dense = nn.Linear(c["hidden_size"], c["intermediate_size"])


class BertLayer(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.attention = BertAttention(c)
        self.intermediate = BertIntermediate(c)
        self.output = BertSelfOutput(c, c["intermediate_size"])
        # Python ints from the config, not from x.shape: the ONNX trace then keeps them as constants.
        self.E, self.H = c["hidden_size"], c["num_attention_heads"]

    def forward(self, x):
        """x [1, T, E] -> (x' [1, T, E], probs [1, H, T, T]); post-LayerNorm as BERT."""
        B, T = x.shape[0], x.shape[1]
        E, H, D = self.E, self.H, self.E // self.H
        s = self.attention.self
        q = s.query(x).view(B, T, H, D).transpose(1, 2)             # [B, H, T, D]
        k = s.key(x).view(B, T, H, D).transpose(1, 2)               # [B, H, S, D]
        v = s.value(x).view(B, T, H, D).transpose(1, 2)             # [B, H, S, D]
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(D)  # [B, H, T, S]
        probs = torch.softmax(scores, dim=-1)
        context = torch.matmul(probs, v).transpose(1, 2).reshape(B, T, E)
        o = self.attention.output
        x = o.LayerNorm(o.dense(context) + x)
        f = self.output
        x = f.LayerNorm(f.dense(F.gelu(self.intermediate.dense(x))) + x)  # F.gelu: the erf form
        return x, probs


class BertEmbeddings(nn.Module):
    def __init__(self, c):
        super().__init__()
        E = c["hidden_size"]
        self.word_embeddings = nn.Embedding(c["vocab_size"], E)
        self.position_embeddings = nn.Embedding(c["max_position_embeddings"], E)
        self.token_type_embeddings = nn.Embedding(c["type_vocab_size"], E)
        self.LayerNorm = nn.LayerNorm(E, eps=c["layer_norm_eps"])
        self.register_buffer("position_ids", torch.arange(c["max_position_embeddings"]).unsqueeze(0),
                             persistent=False)


class BertEncoder(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.layer = nn.ModuleList(BertLayer(c) for _ in range(c["num_hidden_layers"]))


class BertPooler(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.dense = nn.Linear(c["hidden_size"], c["hidden_size"])


class BertModel(nn.Module):
    """A plain BERT encoder whose state_dict keys are Hugging Face BertModel's. forward(input_ids,
    token_type_ids) -> (last_hidden_state, attentions.0, ..., attentions.{L-1}); the pooler is in the
    checkpoint (bert-base has it, and it counts in the 110M) but not in the outputs."""

    def __init__(self, c):
        super().__init__()
        self.embeddings = BertEmbeddings(c)
        self.encoder = BertEncoder(c)
        self.pooler = BertPooler(c)

    def forward(self, input_ids, token_type_ids):
        e = self.embeddings
        T = input_ids.shape[1]
        # HF's order: (word + token type) + position, which keeps float32 bits equal to bert_forward's.
        x = e.word_embeddings(input_ids) + e.token_type_embeddings(token_type_ids)
        x = x + e.position_embeddings(e.position_ids[:, :T])
        x = e.LayerNorm(x)
        attentions = []
        for layer in self.encoder.layer:
            x, probs = layer(x)
            attentions.append(probs)
        return (x, *attentions)


def random_weights(config, seed):
    """Canonical state dict (with the MLM head, as bert-base-uncased's checkpoint) and the BertModel
    holding its encoder and pooler."""
    state = random_state_dict(config, seed, bias_std=0.02, layer_norm_std=0.02, mlm=True, pooler=True)
    model = BertModel(config)
    model.load_state_dict({k: v for k, v in state.items() if not k.startswith("cls.")})
    return state, model.eval()


# ---- files ----

def save_safetensors(path, tensors, metadata):
    """A minimal safetensors writer (8-byte header length, JSON header, raw little-endian data), written to
    a temporary name first so an interrupted run never leaves a truncated file under the real name."""
    dtypes = {torch.float32: "F32", torch.int64: "I64"}
    header, offset = {"__metadata__": {k: str(v) for k, v in metadata.items()}}, 0
    for key, t in tensors.items():
        n = t.numel() * t.element_size()
        header[key] = {"dtype": dtypes[t.dtype], "shape": list(t.shape), "data_offsets": [offset, offset + n]}
        offset += n
    text = json.dumps(header, separators=(",", ":"))
    text += " " * ((8 - (8 + len(text)) % 8) % 8)
    with open(path + ".tmp", "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text.encode())
        for t in tensors.values():
            f.write(t.detach().contiguous().cpu().numpy().tobytes())
    os.replace(path + ".tmp", path)


def vocab_lines(size):
    """bert-base-uncased's special ids, then synthetic entries: single characters, '##' + each, words."""
    lines = ["[PAD]"] + [f"[unused{i}]" for i in range(99)] + ["[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    lines += [f"[unused{i}]" for i in range(99, 994)]  # bert-base: [unused993] is id 998
    chars = [chr(c) for c in range(33, 127) if not chr(c).isupper()]
    lines += chars + ["##" + ch for ch in chars]
    i = 0
    while len(lines) < size:
        lines.append(f"tok{i}")
        i += 1
    assert lines[100] == "[UNK]" and lines[101] == "[CLS]" and lines[102] == "[SEP]" and lines[103] == "[MASK]"
    return lines[:size]


def token_ids(T, seed):
    """[CLS], T - 2 ids drawn uniformly from [1000, 30000) by a generator seeded from (seed, T), [SEP]."""
    g = torch.Generator().manual_seed(1000 * seed + T)
    return [CLS] + torch.randint(1000, 30000, (T - 2,), generator=g).tolist() + [SEP]


def write_folder(out, config, state, model, seed, opset, tokens):
    tokenizer = {"tokenizer_class": "BertTokenizer", "do_lower_case": True, "model_max_length": 512,
                 "unk_token": "[UNK]", "sep_token": "[SEP]", "pad_token": "[PAD]", "cls_token": "[CLS]",
                 "mask_token": "[MASK]"}
    write_hf_folder(out, config, state, vocab_lines(config["vocab_size"]), tokenizer_config=tokenizer,
                    metadata={"generator": GENERATOR, "seed": str(seed), "torch": torch.__version__})

    ids = torch.tensor([token_ids(max(tokens), seed)])
    L = config["num_hidden_layers"]
    attention_names = [f"attentions.{i}" for i in range(L)]
    dynamic = {"input_ids": {1: "T"}, "token_type_ids": {1: "T"}, "last_hidden_state": {1: "T"}}
    dynamic.update({n: {2: "T", 3: "T"} for n in attention_names})
    onnx_path = os.path.join(out, "model.onnx")
    with torch.no_grad():
        torch.onnx.export(model, (ids, torch.zeros_like(ids)), onnx_path + ".tmp", opset_version=opset,
                          input_names=["input_ids", "token_type_ids"],
                          output_names=["last_hidden_state"] + attention_names,
                          dynamic_axes=dynamic, do_constant_folding=True)
    os.replace(onnx_path + ".tmp", onnx_path)
    import onnx
    onnx.checker.check_model(onnx_path)  # by path: the checker then also works past protobuf's 2 GB


def stamp_of(config, seed, opset):
    return {"generator": GENERATOR, "config": config, "seed": seed, "opset": opset, "torch": torch.__version__,
            "weights": "random_state_dict(config, seed, bias_std=0.02, layer_norm_std=0.02, mlm=True)"}


# ---- timing ----

def blas_library():
    """The BLAS shared object this process loaded (torch 1.13's config string does not name it)."""
    with open("/proc/self/maps") as f:
        libs = {line.split()[-1] for line in f if "blas" in line.lower() and "/" in line}
    return ", ".join(sorted(os.path.realpath(p) for p in libs)) or "none found"


def time_forward(model, ids, threads, warmup, repeats):
    torch.set_num_threads(threads)
    x = torch.tensor([ids])
    tt = torch.zeros_like(x)
    runs = []
    with torch.no_grad():
        for i in range(warmup + repeats):
            t0 = time.perf_counter()
            model(x, tt)
            if i >= warmup:
                runs.append((time.perf_counter() - t0) * 1000)
    return runs


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--out", default=None)
    p.add_argument("--tokens", default="32,128")
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--warmup", type=int, default=2)
    p.add_argument("--threads", default="1,2")
    p.add_argument("--seed", type=int, default=0)
    # 17: LayerNorm exports as one LayerNormalization node; onnxruntime-web ran the opset-14 export (LayerNorm
    # as ReduceMean/Sub/Pow/Sqrt/Div) 0-10% slower at 128 tokens here, so 17 gives it its better graph.
    p.add_argument("--opset", type=int, default=17)
    p.add_argument("--small", action="store_true")
    p.add_argument("--no-time", action="store_true", help="write the files and references only")
    a = p.parse_args()
    config = SMALL if a.small else BASE
    out = a.out or ("/tmp/attnlab-bert-small" if a.small else "/tmp/attnlab-bert-base")
    tokens = [int(t) for t in a.tokens.split(",")]
    assert all(2 <= T <= config["max_position_embeddings"] for T in tokens), tokens

    t0 = time.perf_counter()
    state, model = random_weights(config, a.seed)
    params = sum(t.numel() for t in state.values())
    stamp_path = os.path.join(out, STAMP)
    stamp = stamp_of(config, a.seed, a.opset)
    old = None
    if os.path.exists(stamp_path):
        with open(stamp_path) as f:
            old = json.load(f)
    wrote = old != stamp or not all(os.path.exists(os.path.join(out, n)) for n in
                                    ("config.json", "vocab.txt", "model.safetensors", "model.onnx"))
    if wrote:
        if os.path.exists(stamp_path):
            os.remove(stamp_path)
        write_folder(out, config, state, model, a.seed, a.opset, tokens)
        with open(stamp_path, "w") as f:
            json.dump(stamp, f, indent=2)
    prepare_s = time.perf_counter() - t0

    L = config["num_hidden_layers"]
    torch.set_num_threads(1)
    checks = {}
    for T in tokens:
        ids = token_ids(T, a.seed)
        with open(os.path.join(out, f"ids_{T}.json"), "w") as f:
            json.dump({"generator": GENERATOR, "seed": a.seed, "tokens": T, "input_ids": ids,
                       "token_type_ids": [0] * T}, f)
        x = torch.tensor([ids])
        with torch.no_grad():
            ref = bert_forward(config, state, ids)
            hidden, *attentions = model(x, torch.zeros_like(x))
        # The timed (and exported) module computes what the shared reference does.
        diff = max((hidden[0] - ref["hidden_states"][-1]).abs().max().item(),
                   (torch.stack(attentions)[:, 0] - ref["attentions"]).abs().max().item())
        assert diff < 1e-5, f"BertModel differs from bert_reference.bert_forward by {diff} at T={T}"
        save_safetensors(os.path.join(out, f"ref_{T}.safetensors"),
                         {"last_hidden_state": ref["hidden_states"][-1].unsqueeze(0),
                          "attentions": ref["attentions"].unsqueeze(1), "input_ids": x},
                         {"generator": GENERATOR, "seed": a.seed, "torch": torch.__version__,
                          "note": f"bert_reference.bert_forward, fp32, 1 thread; attentions [L={L}, 1, H, T, T]"})
        checks[T] = diff

    results = []
    if not a.no_time:
        for T in tokens:
            ids = token_ids(T, a.seed)
            for threads in map(int, a.threads.split(",")):
                runs = time_forward(model, ids, threads, a.warmup, a.repeats)
                results.append({"tokens": T, "threads": threads, "median_ms": statistics.median(runs),
                                "runs_ms": [round(r, 2) for r in runs]})
    best = {}
    for r in results:
        if r["tokens"] not in best or r["median_ms"] < best[r["tokens"]]["median_ms"]:
            best[r["tokens"]] = {"threads": r["threads"], "median_ms": r["median_ms"]}
    print(json.dumps({"framework": "pytorch", "torch": torch.__version__, "blas": blas_library(),
                      "omp_wait_policy": os.environ.get("OMP_WAIT_POLICY"), "dir": out,
                      "shape": "small" if a.small else "bert-base", "params": params, "seed": a.seed,
                      "wrote_folder": wrote, "prepare_s": round(prepare_s, 2),
                      "module_vs_reference_max_abs": checks, "warmup": a.warmup,
                      "repeats": a.repeats, "results": results, "best": best}), flush=True)


if __name__ == "__main__":
    sys.exit(main())
