#!/usr/bin/python3
"""PyTorch reference for the Alignment lab: the course notebook's model and training loop, timed.

Prints one JSON line per (task, threads, seed): steps/s and, after training, accuracy on a fresh batch
of 1024, head-mean pattern mass (diagonal / anti-diagonal / matching keys), best head, Bayes ceiling.
Run by benchmarks/alignment.mjs in the same run as ours; see docs/benchmarks.md.
  OMP_WAIT_POLICY=passive /usr/bin/python3 benchmarks/alignment_torch.py --tasks copy --threads 1,2 --seeds 0
"""
import argparse
import json
import os
import sys
import random
import time

import numpy as np
import torch
import torch.nn.functional as F


sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'tests', 'fixtures'))
from make_fixtures import CrossAttnSeqClassifier  # noqa: E402  the notebook's model, unchanged


def make_batch(task, B, L, V, M=12, K=12, Val=12, unique=False):
    if task != 'pointer':
        x = torch.randint(1, V, (B, L), dtype=torch.long)
        y = x if task == 'copy' else x.flip(1)
        return x, x, y, None, L
    if unique:
        keys = torch.stack([torch.randperm(K)[:M] + 1 for _ in range(B)])
    else:
        keys = torch.randint(1, K + 1, (B, M), dtype=torch.long)
    vals = torch.randint(K + 1, K + Val + 1, (B, M), dtype=torch.long)
    idx = torch.randint(0, M, (B,), dtype=torch.long)
    return keys, vals, vals[torch.arange(B), idx], keys[torch.arange(B), idx], 1


def run(task, steps, seed, unique, L=16, V=32, M=12, K=12, Val=12, d_model=32, heads=4, lr=3e-3):
    random.seed(seed); np.random.seed(seed); torch.manual_seed(seed)
    vocab = V if task != 'pointer' else 1 + K + Val
    max_in, max_out = (L, L) if task != 'pointer' else (M, 1)
    model = CrossAttnSeqClassifier(vocab, d_model, heads, max_in, max_out)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    t0 = time.perf_counter()
    for _ in range(steps):
        kt, vt, y, q, out_len = make_batch(task, 128, L, vocab, M, K, Val, unique)
        logits, _ = model(kt, vt, out_len, q)
        loss = F.cross_entropy(logits.reshape(-1, vocab), y.reshape(-1))
        opt.zero_grad(set_to_none=True); loss.backward(); opt.step()
    seconds = time.perf_counter() - t0
    with torch.no_grad():
        kt, vt, y, q, out_len = make_batch(task, 1024, L, vocab, M, K, Val, unique)
        logits, w = model(kt, vt, out_len, q)  # w [B, H, T, S]
        acc = (logits.argmax(-1).reshape(-1) == y.reshape(-1)).float().mean().item()
        T, S = w.shape[2], w.shape[3]
        if task == 'copy':
            head_mass = w.diagonal(dim1=2, dim2=3).mean(dim=(0, 2))
        elif task == 'reverse':
            head_mass = w.flip(3).diagonal(dim1=2, dim2=3).mean(dim=(0, 2))
        else:
            match = (kt == q[:, None]).float()[:, None, None, :]
            head_mass = (w * match).sum(-1).mean(dim=(0, 2))
        ceiling = 1.0
        if task == 'pointer':
            best = []
            for b in range(kt.shape[0]):
                vals = vt[b][kt[b] == q[b]].tolist()
                best.append(max(vals.count(v) for v in vals) / len(vals))
            ceiling = float(np.mean(best))
    return {'framework': 'pytorch', 'torch': torch.__version__, 'task': task, 'unique_keys': unique,
            'seed': seed, 'threads': torch.get_num_threads(), 'steps': steps,
            'steps_per_second': steps / seconds, 'accuracy': acc, 'bayes_ceiling': ceiling,
            'pattern_mass': head_mass.mean().item(), 'best_head_mass': head_mass.max().item()}


def main():
    p = argparse.ArgumentParser()
    p.add_argument('--tasks', default='copy')
    p.add_argument('--threads', default='1,2')
    p.add_argument('--seeds', default='0')
    p.add_argument('--steps', type=int, default=0, help='0: the notebook defaults')
    p.add_argument('--unique-keys', action='store_true')
    a = p.parse_args()
    defaults = {'copy': 200, 'reverse': 250, 'pointer': 350}
    for task in a.tasks.split(','):
        for threads in map(int, a.threads.split(',')):
            torch.set_num_threads(threads)
            for seed in map(int, a.seeds.split(',')):
                print(json.dumps(run(task, a.steps or defaults[task], seed, a.unique_keys)), flush=True)


if __name__ == '__main__':
    main()
