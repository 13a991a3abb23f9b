#!/usr/bin/python3
"""PyTorch side of the translation speed benchmark (issue 14), and the files every side of it reads.

Builds a model in Helsinki-NLP/opus-mt-en-fr's real shape (its config.json: d_model 512, 6 + 6 layers,
8 heads, ffn 2048, vocabulary 59,514, 512 positions, SiLU; 74.6M parameters, about 300 MB in fp32) with
seeded random weights from tests/fixtures/marian_reference.py, and writes into --out (skipped when a
stamp says the folder already holds this seed and shape):
  config.json             marian_reference.marian_config(): opus-mt-en-fr's
  model.safetensors       what save_pretrained writes today (the canonical tensors only)
  pytorch_model.bin       torch.save of the state_dict as older transformers wrote it (what most opus-mt
                          folders hold): the tied embedding copies sharing one storage, the sinusoid tables,
                          every other tensor contiguous (make_marian_fixtures.bin_state_dict, views=False)
  ids.json                the source ids: 7 seeded ids in [100, 59000) then </s> (0): the length of
                          "The cat sat on the mat." in opus-mt-en-fr's source.spm (▁The ▁cat ▁sat ▁on ▁the
                          ▁mat . </s>); random weights make the words meaningless, only the shapes matter
and on every run, for each beam count of --beams, the plain PyTorch Marian's generate() output on those
ids (marian_reference.greedy_search / beam_search: the reference the Translation lab is checked against,
written op for op as HF's MarianMTModel and generate(); eval, no_grad, fp32, batch 1, its key/value cache):
  ref_beams{N}.json       {ids, score}
then times generate() at each thread count of --threads: --warmup runs, then --repeats timed ones; the
median is the figure. Random weights never choose </s> by themselves, so every run goes to --max-length
(the start token counts, as generate() counts; </s> is forced last): each timed decode makes
max_length - 1 tokens, the same for every runner. Prints one JSON line.

OMP_WAIT_POLICY is set to passive before `import torch` unless the environment sets it.
Usage:
  /usr/bin/python3 benchmarks/marian_torch.py [--out /tmp/attnlab-opus-mt] [--beams 1,4] [--max-length 16]
      [--repeats 5] [--warmup 1] [--threads 1,2] [--seed 0] [--small] [--no-time]
  --small: d_model 64, 2 + 2 layers, 2 heads, vocabulary 2,000, for checking the harness quickly
  (default --out /tmp/attnlab-opus-mt-small).
"""
import os

os.environ.setdefault("OMP_WAIT_POLICY", "passive")  # before torch loads libgomp  # noqa: E402

import argparse
import json
import random
import statistics
import sys
import time

import torch

GENERATOR = "benchmarks/marian_torch.py"
STAMP = "attnlab_bench_stamp.json"
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "fixtures"))
sys.path.insert(0, HERE)
from bert_torch import blas_library  # noqa: E402
from make_marian_fixtures import bin_state_dict  # noqa: E402
from marian_reference import (beam_search, greedy_search, marian_config, random_state_dict,  # noqa: E402
                              write_safetensors_weights)

OPUS_MT_EN_FR = marian_config()
SMALL = marian_config(vocab_size=2000, d_model=64, encoder_layers=2, decoder_layers=2, encoder_attention_heads=2,
                      decoder_attention_heads=2, encoder_ffn_dim=256, decoder_ffn_dim=256)
SOURCE_TOKENS = 8  # "The cat sat on the mat." in opus-mt-en-fr's pieces, </s> included


def source_ids(config, seed):
    rng = random.Random(seed)
    high = min(59000, config["vocab_size"] - 2)
    return [rng.randrange(100, high) for _ in range(SOURCE_TOKENS - 1)] + [config["eos_token_id"]]


def write_folder(out, config, state):
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "config.json"), "w") as f:
        json.dump(config, f, indent=2, sort_keys=True)
    write_safetensors_weights(os.path.join(out, "model.safetensors"), state, {"generator": GENERATOR})
    with open(os.path.join(out, "pytorch_model.bin.tmp"), "wb") as f:
        torch.save(bin_state_dict(config, state, views=False), f)
    os.replace(os.path.join(out, "pytorch_model.bin.tmp"), os.path.join(out, "pytorch_model.bin"))


def decode(config, state, ids, beams, max_length):
    with torch.no_grad():
        if beams == 1:
            return greedy_search(config, state, ids, max_length)
        return beam_search(config, state, ids, beams, max_length)


def time_decode(config, state, ids, beams, max_length, threads, warmup, repeats):
    torch.set_num_threads(threads)
    runs = []
    for i in range(warmup + repeats):
        t0 = time.perf_counter()
        decode(config, state, ids, beams, max_length)
        if i >= warmup:
            runs.append((time.perf_counter() - t0) * 1000)
    return runs


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--out", default=None)
    p.add_argument("--beams", default="1,4")
    p.add_argument("--max-length", type=int, default=16)
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--warmup", type=int, default=1)
    p.add_argument("--threads", default="1,2")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--small", action="store_true")
    p.add_argument("--no-time", action="store_true", help="write the files and references only")
    a = p.parse_args()
    config = SMALL if a.small else OPUS_MT_EN_FR
    out = a.out or ("/tmp/attnlab-opus-mt-small" if a.small else "/tmp/attnlab-opus-mt")
    beams = [int(b) for b in a.beams.split(",")]

    t0 = time.perf_counter()
    state = random_state_dict(config, a.seed)
    params = sum(t.numel() for t in state.values())
    stamp = {"generator": GENERATOR, "config": config, "seed": a.seed, "torch": torch.__version__,
             "weights": "marian_reference.random_state_dict(config, seed)"}
    stamp_path = os.path.join(out, STAMP)
    old = None
    if os.path.exists(stamp_path):
        with open(stamp_path) as f:
            old = json.load(f)
    wrote = old != stamp or not all(os.path.exists(os.path.join(out, n))
                                    for n in ("config.json", "model.safetensors", "pytorch_model.bin"))
    if wrote:
        if os.path.exists(stamp_path):
            os.remove(stamp_path)
        write_folder(out, config, state)
        with open(stamp_path, "w") as f:
            json.dump(stamp, f, indent=2)
    ids = source_ids(config, a.seed)
    with open(os.path.join(out, "ids.json"), "w") as f:
        json.dump({"generator": GENERATOR, "seed": a.seed, "input_ids": ids}, f)
    prepare_s = time.perf_counter() - t0

    torch.set_num_threads(1)
    refs = {}
    for b in beams:
        r = decode(config, state, ids, b, a.max_length)
        refs[b] = {"ids": [int(i) for i in r["ids"]], "score": float(r.get("score", 0.0))}
        with open(os.path.join(out, f"ref_beams{b}.json"), "w") as f:
            json.dump({"generator": GENERATOR, "seed": a.seed, "max_length": a.max_length, "beams": b, **refs[b]}, f)

    results = []
    if not a.no_time:
        for b in beams:
            for threads in map(int, a.threads.split(",")):
                runs = time_decode(config, state, ids, b, a.max_length, threads, a.warmup, a.repeats)
                results.append({"beams": b, "threads": threads, "median_ms": statistics.median(runs),
                                "tokens": len(refs[b]["ids"]) - 1, "runs_ms": [round(r, 2) for r in runs]})
    print(json.dumps({"framework": "pytorch", "torch": torch.__version__, "blas": blas_library(),
                      "omp_wait_policy": os.environ.get("OMP_WAIT_POLICY"), "dir": out,
                      "shape": "small" if a.small else "opus-mt-en-fr", "params": params, "seed": a.seed,
                      "max_length": a.max_length, "wrote_folder": wrote, "prepare_s": round(prepare_s, 2),
                      "refs": refs, "warmup": a.warmup, "repeats": a.repeats, "results": results}), flush=True)


if __name__ == "__main__":
    sys.exit(main())
