#!/usr/bin/python3
"""PyTorch reference for the Induction lab's speed: the same transformer as the lab (TransformerLens's
maths, written in plain PyTorch in tests/fixtures/make_induction_fixtures.py, the file the lab's gradients
are checked against), trained with torch.optim.Adam on the repeat task's batches, the loss's .item() read
every step as a training loop prints it. The batches are drawn before timing (ours are drawn inside the
step); the parameters start as TransformerLens's init_mode "gpt2" draws them.

Prints one JSON line per thread count: steps/s over --steps steps after --warmup. Run by
benchmarks/induction.mjs in the same run as ours; set OMP_WAIT_POLICY before Python starts:
  OMP_WAIT_POLICY=passive /usr/bin/python3 benchmarks/induction_torch.py [--threads 1,2] [--steps 300] \\
      [--warmup 20] [--settings '{"layers": 2, ...}']
"""
import argparse
import json
import math
import os
import sys
import time

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "fixtures"))
from make_induction_fixtures import loss_of, param_shapes, repeat_tokens  # noqa: E402


def run(settings, threads, steps, warmup, seed):
    torch.set_num_threads(threads)
    gen = torch.Generator().manual_seed(seed)
    params = {}
    for name, shape in param_shapes(settings).items():
        leaf = name.rsplit(".", 1)[1]
        t = torch.randn(shape, generator=gen) * (0.8 / math.sqrt(settings["dModel"])) if leaf.startswith("W_") else (
            torch.ones(shape) if leaf == "w" else torch.zeros(shape))
        params[name] = t.requires_grad_(True)
    opt = torch.optim.Adam(list(params.values()), lr=settings["lr"])
    batches = [repeat_tokens(settings, settings["batch"], gen) for _ in range(warmup + steps)]

    def step(tokens):
        opt.zero_grad()
        loss, _ = loss_of(settings, params, tokens)
        loss.backward()
        opt.step()
        return loss.item()

    for i in range(warmup):
        step(batches[i])
    start = time.perf_counter()
    for i in range(steps):
        step(batches[warmup + i])
    return steps / (time.perf_counter() - start)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--threads", default="1,2")
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--warmup", type=int, default=20)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--settings", default="{}")
    args = parser.parse_args()
    settings = dict(layers=2, heads=2, dModel=64, dHead=32, mlp=False, layerNorm=False, vocab=64, context=33,
                    batch=32, lr=3e-3)
    settings.update(json.loads(args.settings))
    for threads in (int(t) for t in args.threads.split(",")):
        print(json.dumps({"threads": threads, "steps_per_second": run(settings, threads, args.steps, args.warmup, args.seed),
                          "settings": settings, "torch": torch.__version__}), flush=True)


if __name__ == "__main__":
    main()
