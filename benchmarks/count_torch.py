#!/usr/bin/python3
"""PyTorch reference for the Count lab (issue 11): the course notebook's AttentionModel (05) and its train()
loop (make_batch(100), binary cross-entropy, Adam lr 1e-4; float(loss) per step as the notebook's
traj.append does; no plotting).

  speed: one JSON line per thread count: {"threads", "steps_per_s"} over --steps steps after --warmup
  scan:  one JSON line per seed (torch.manual_seed(seed)): accuracy on 10,000 fresh sequences after --steps
         steps at --lr, as the notebook's figures were measured

Set OMP_WAIT_POLICY before Python starts (read when torch loads its OpenMP runtime):
  OMP_WAIT_POLICY=passive /usr/bin/python3 benchmarks/count_torch.py speed [--threads 1,2] [--steps 2000]
  /usr/bin/python3 benchmarks/count_torch.py scan [--first 0] [--last 9] [--lr 1e-4] [--steps 5001]
"""
import argparse
import json
import os
import sys
import time

import torch

# The notebook's model and make_batch live once, in the committed fixture script.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "fixtures"))
from make_count_fixtures import AttentionModel, make_batch  # noqa: E402


def train_steps(model, opt, steps):
    for _ in range(steps):
        x, y = make_batch(100)
        p = model.forward(x)
        loss = torch.nn.functional.binary_cross_entropy(p, y)
        loss.backward()
        float(loss)
        opt.step()
        opt.zero_grad()


def speed(args):
    for threads in [int(t) for t in args.threads.split(",")]:
        torch.set_num_threads(threads)
        torch.manual_seed(0)
        model = AttentionModel()
        opt = torch.optim.Adam(model.parameters(), lr=1e-4)
        train_steps(model, opt, args.warmup)
        start = time.perf_counter()
        train_steps(model, opt, args.steps)
        rate = args.steps / (time.perf_counter() - start)
        print(json.dumps({"threads": threads, "steps_per_s": rate, "torch": torch.__version__}), flush=True)


def scan(args):
    torch.set_num_threads(1)
    for seed in range(args.first, args.last + 1):
        torch.manual_seed(seed)
        model = AttentionModel()
        opt = torch.optim.Adam(model.parameters(), lr=args.lr)
        train_steps(model, opt, args.steps)
        with torch.no_grad():
            x, y = make_batch(10000)
            accuracy = float(((model(x) > 0.5).float() == y).float().mean())
        print(json.dumps({"seed": seed, "accuracy": accuracy}), flush=True)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("mode", choices=["speed", "scan"])
    parser.add_argument("--threads", default="1,2")
    parser.add_argument("--steps", type=int, default=None)
    parser.add_argument("--warmup", type=int, default=50)
    parser.add_argument("--first", type=int, default=0)
    parser.add_argument("--last", type=int, default=9)
    parser.add_argument("--lr", type=float, default=1e-4)
    args = parser.parse_args()
    if args.steps is None:
        args.steps = 2000 if args.mode == "speed" else 5001
    speed(args) if args.mode == "speed" else scan(args)


if __name__ == "__main__":
    main()
