#!/usr/bin/python3
"""The course notebook's Lookup training loop (02, sections 6.5-6.7) in PyTorch, for the speed ratio in
docs/lookup.md: AttentionTest, batch 64, the database expanded to [64, 100, 784] as the notebook does,
Adam(lr=1e-4), on the 10,000 digits of public/assets/mnist10k.bin.gz (a random 100 as the database, the
rest as queries). Prints steps/s over --steps steps after --warmup.

  OMP_WAIT_POLICY=passive /usr/bin/python3 benchmarks/lookup_torch.py [--steps 500] [--threads 1]
"""
import argparse
import os
import sys
import time

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "fixtures"))
from make_lookup_fixtures import AttentionTest, normalise, read_asset  # noqa: E402


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=500)
    parser.add_argument("--warmup", type=int, default=20)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--heads", type=int, default=1)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(42)
    pixels, _ = read_asset()
    perm = torch.randperm(pixels.shape[0])
    image_database = normalise(pixels[perm[:100]], torch.float32)
    queries_all = normalise(pixels[perm[100:]], torch.float32)
    batch_size = 64
    image_database_batches = image_database.unsqueeze(0).expand(batch_size, 100, -1)
    model = AttentionTest(100, 32, args.heads)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-4)
    model.train()
    start = None
    for step in range(args.warmup + args.steps):
        if step == args.warmup:
            start = time.perf_counter()
        index = torch.randint(0, queries_all.shape[0], (batch_size,))
        X_q = queries_all[index].reshape(batch_size, 1, -1)
        output, _ = model(X_q, image_database_batches)
        loss = (output - X_q).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    seconds = time.perf_counter() - start
    print(f"pytorch {torch.__version__}, {args.threads} thread(s), heads {args.heads}: "
          f"{args.steps / seconds:.1f} steps/s over {args.steps} steps (loss {loss.item():.4f})")


if __name__ == "__main__":
    main()
