#!/usr/bin/python3
"""PyTorch reference for the Lookup lab's speed (issue 10): the course notebook's AttentionTest (02, sections
6.3-6.7: Linear(784, 32) embedding, nn.MultiheadAttention(32, heads, batch_first), retrieval = attention
weights x database images, MSE against the query, Adam lr 1e-4, batch 64) trained on the 10,000 digits of
public/assets/mnist10k.bin.gz (a fixed random 100 as the database, the rest as queries, reshuffled each
epoch and dropping the last partial batch, as the notebook's DataLoader does).

Three variants of the training step, the same maths (they print the same loss to every digit):
  literal   the notebook's loop: the database expanded to [64, 100, 784] and embedded 64 times per step,
            retrieval by torch.bmm over the expanded batch;
  once-bmm  the database embedded once per step ([100, 784] -> [100, 32], expanded only after the
            embedding), retrieval still torch.bmm(weights, expanded database) as the notebook writes it;
  once      embedded once, and retrieved with one [64, 100] x [100, 784] product: the fastest of the three
            (bmm over a stride-0 batch runs 64 small products, forward and backward).
Both keep the notebook's loss.item() per step. Data loading is not timed (the images are normalised
up front, as ours are).

Prints one JSON line per (variant, threads): steps/s over --steps steps after --warmup. Run by
benchmarks/lookup.mjs in the same run as ours; set OMP_WAIT_POLICY before Python starts (it is read when
torch loads its OpenMP runtime):
  OMP_WAIT_POLICY=passive /usr/bin/python3 benchmarks/lookup_torch.py [--variants literal,once-bmm,once] \
      [--threads 1,2] [--steps 300] [--warmup 20] [--heads 1]
"""
import argparse
import json
import os
import sys
import time

import torch

# The notebook's model and the asset reader live once, in the committed fixture script.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "fixtures"))
from make_lookup_fixtures import AttentionTest, read_asset  # noqa: E402
BATCH = 64
DATABASE = 100


def forward_once(model, X_q, database, image_database_batches, bmm):
    """The same maths as AttentionTest.forward on the expanded database, with the database embedded once."""
    X_v = model.img_mlp(database).unsqueeze(0).expand(X_q.shape[0], -1, -1)  # [B, 100, 32], a view
    _, weights = model.mha(model.img_mlp(X_q), X_v, X_v)                     # [B, 1, 100]
    if bmm:
        return torch.bmm(weights, image_database_batches), weights           # [B, 1, 784]
    return (weights.squeeze(1) @ database).unsqueeze(1), weights             # [B, 1, 784]


def blas_library():
    """The BLAS shared object this process loaded (torch 1.13's config string does not name it)."""
    with open("/proc/self/maps") as f:
        libs = {line.split()[-1] for line in f if "blas" in line.lower() and "/" in line}
    return ", ".join(sorted(os.path.realpath(p) for p in libs)) or "none found"


def run(variant, threads, steps, warmup, heads, seed, pixels):
    torch.set_num_threads(threads)
    torch.manual_seed(seed)
    perm = torch.randperm(pixels.shape[0])
    images = (pixels.float() / 255 - 0.5) / 0.5  # ToTensor() then Normalize([0.5], [0.5])
    database, queries_all = images[perm[:DATABASE]].contiguous(), images[perm[DATABASE:]].contiguous()
    image_database_batches = database.unsqueeze(0).expand(BATCH, DATABASE, -1)
    model = AttentionTest(DATABASE, 32, heads)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-4)
    model.train()
    per_epoch = queries_all.shape[0] // BATCH
    order, start = None, None
    for step in range(warmup + steps):
        if step == warmup:
            start = time.perf_counter()
        if step % per_epoch == 0:
            order = torch.randperm(queries_all.shape[0])
        index = order[(step % per_epoch) * BATCH:(step % per_epoch + 1) * BATCH]
        X_q = queries_all[index].reshape(BATCH, 1, -1)
        if variant == "literal":
            attn_output, _ = model(X_q, image_database_batches)
        else:
            attn_output, _ = forward_once(model, X_q, database, image_database_batches, variant == "once-bmm")
        loss = (attn_output - X_q).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        last_loss = loss.item()
    seconds = time.perf_counter() - start
    return {"framework": "pytorch", "torch": torch.__version__, "blas": blas_library(),
            "omp_wait_policy": os.environ.get("OMP_WAIT_POLICY"), "variant": variant, "heads": heads,
            "threads": torch.get_num_threads(), "steps": steps, "warmup": warmup,
            "steps_per_second": steps / seconds, "loss": last_loss}


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--variants", default="literal,once-bmm,once")
    p.add_argument("--threads", default="1,2")
    p.add_argument("--steps", type=int, default=300)
    p.add_argument("--warmup", type=int, default=20)
    p.add_argument("--heads", type=int, default=1)
    p.add_argument("--seed", type=int, default=0)
    a = p.parse_args()
    pixels, _ = read_asset()
    for variant in a.variants.split(","):
        assert variant in ("literal", "once-bmm", "once"), variant
        for threads in map(int, a.threads.split(",")):
            print(json.dumps(run(variant, threads, a.steps, a.warmup, a.heads, a.seed, pixels)), flush=True)


if __name__ == "__main__":
    main()
