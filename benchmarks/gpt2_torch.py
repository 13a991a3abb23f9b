#!/usr/bin/python3
"""PyTorch side of the Writing lab's speed benchmark (issue 26), and the files every side of it reads.

Builds a GPT-2 in gpt2-small's shape (V 50,257, E 768, 12 layers, 12 heads, 1,024 positions; 124M
parameters, about 500 MB in fp32) with seeded random weights (HF's init: normal(0, 0.02), LayerNorms 1
and 0, biases 0), and writes into --out (skipped when its stamp says it holds this seed and shape):
  config.json, model.safetensors   the GPT2Model names, Conv1D weights [in, out] (what the lab loads)
  model.onnx                       torch.onnx.export (opset 17) of one cached step: input_ids [1, n] and
                                   past [L, 2, H, S, D] -> logits [1, V] (the last row) and present
                                   [L, 2, H, S + n, D]: the key/value cache as onnxruntime-web runs it
  ids.json                         {prompts: {T: ids}}: seeded ids in [0, 50256)
then, per prompt length of --prompts, times at 1 thread (torch.set_num_threads) with the same step
module: the prompt's pass, then --new greedy tokens one cached step each; per-token decode is the median
of the steps' times. Prints one JSON line with the greedy ids (the other runners check theirs against
them) and the times.

Usage: /usr/bin/python3 benchmarks/gpt2_torch.py [--out /tmp/attnlab-gpt2] [--prompts 32,128] [--new 32] [--small]
"""
import argparse
import json
import math
import os
import struct
import sys
import time

os.environ.setdefault("OMP_WAIT_POLICY", "passive")  # before torch loads libgomp  # noqa: E402
import torch  # noqa: E402

GENERATOR = "benchmarks/gpt2_torch.py"
SMALL_GPT2 = {"vocab_size": 50257, "n_embd": 768, "n_layer": 12, "n_head": 12, "n_positions": 1024}
TINY = {"vocab_size": 2000, "n_embd": 64, "n_layer": 2, "n_head": 2, "n_positions": 256}


def config_json(c):
    return {"activation_function": "gelu_new", "architectures": ["GPT2LMHeadModel"], "bos_token_id": c["vocab_size"] - 1,
            "eos_token_id": c["vocab_size"] - 1, "layer_norm_epsilon": 1e-5, "model_type": "gpt2", "n_ctx": c["n_positions"],
            "n_embd": c["n_embd"], "n_head": c["n_head"], "n_inner": None, "n_layer": c["n_layer"],
            "n_positions": c["n_positions"], "vocab_size": c["vocab_size"]}


def random_state(c, seed):
    g = torch.Generator().manual_seed(seed)
    E, V, P = c["n_embd"], c["vocab_size"], c["n_positions"]
    s = {"wte.weight": torch.randn(V, E, generator=g) * 0.02, "wpe.weight": torch.randn(P, E, generator=g) * 0.01}
    for i in range(c["n_layer"]):
        p = f"h.{i}."
        s[p + "ln_1.weight"], s[p + "ln_1.bias"] = torch.ones(E), torch.zeros(E)
        s[p + "attn.c_attn.weight"], s[p + "attn.c_attn.bias"] = torch.randn(E, 3 * E, generator=g) * 0.02, torch.zeros(3 * E)
        s[p + "attn.c_proj.weight"], s[p + "attn.c_proj.bias"] = torch.randn(E, E, generator=g) * 0.02, torch.zeros(E)
        s[p + "ln_2.weight"], s[p + "ln_2.bias"] = torch.ones(E), torch.zeros(E)
        s[p + "mlp.c_fc.weight"], s[p + "mlp.c_fc.bias"] = torch.randn(E, 4 * E, generator=g) * 0.02, torch.zeros(4 * E)
        s[p + "mlp.c_proj.weight"], s[p + "mlp.c_proj.bias"] = torch.randn(4 * E, E, generator=g) * 0.02, torch.zeros(E)
    s["ln_f.weight"], s["ln_f.bias"] = torch.ones(E), torch.zeros(E)
    return s


class Gpt2Step(torch.nn.Module):
    """One cached pass of GPT-2 (tests/fixtures/gpt2_reference.py's maths, with a cache)."""

    def __init__(self, c, state):
        super().__init__()
        self.c = c
        for k, v in state.items():
            self.register_buffer(k.replace(".", "_"), v)

    def w(self, name):
        return getattr(self, name.replace(".", "_"))

    def forward(self, input_ids, past):
        c = self.c
        E, H, L = c["n_embd"], c["n_head"], c["n_layer"]
        D, n, S0 = E // H, input_ids.shape[1], past.shape[3]
        ids = input_ids[0]
        pos = torch.arange(n) + S0
        x = self.w("wte.weight")[ids] + self.w("wpe.weight")[pos]
        S = S0 + n
        causal = torch.arange(S).view(1, S) <= pos.view(n, 1)  # [n, S]
        norm = lambda v, name: torch.nn.functional.layer_norm(v, (E,), self.w(name + ".weight"), self.w(name + ".bias"), eps=1e-5)
        conv = lambda v, name: v @ self.w(name + ".weight") + self.w(name + ".bias")
        present = []
        for i in range(L):
            p = f"h.{i}."
            q, k, v = conv(norm(x, p + "ln_1"), p + "attn.c_attn").split(E, dim=-1)
            q, k, v = (t.view(n, H, D).transpose(0, 1) for t in (q, k, v))
            k = torch.cat([past[i, 0], k], dim=1)
            v = torch.cat([past[i, 1], v], dim=1)
            present.append(torch.stack([k, v]))
            scores = (q @ k.transpose(1, 2)) / math.sqrt(D)
            w = torch.softmax(scores.masked_fill(~causal, float("-inf")), dim=-1)
            x = x + conv((w @ v).transpose(0, 1).reshape(n, E), p + "attn.c_proj")
            h = conv(norm(x, p + "ln_2"), p + "mlp.c_fc")
            h = 0.5 * h * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (h + 0.044715 * torch.pow(h, 3.0))))
            x = x + conv(h, p + "mlp.c_proj")
        logits = norm(x[-1:], "ln_f") @ self.w("wte.weight").T
        return logits, torch.stack(present)


def save_safetensors(path, tensors, metadata):
    header, blobs, offset = {"__metadata__": metadata}, [], 0
    for key in sorted(tensors):
        data = tensors[key].contiguous().numpy().tobytes()
        header[key] = {"dtype": "F32", "shape": list(tensors[key].shape), "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    text = json.dumps(header, separators=(",", ":"))
    text += " " * ((8 - (8 + len(text)) % 8) % 8)
    with open(path + ".tmp", "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text.encode())
        for b in blobs:
            f.write(b)
    os.replace(path + ".tmp", path)


def write_folder(out, c, state, model, prompts, seed):
    stamp = {"generator": GENERATOR, "config": c, "seed": seed, "prompts": prompts, "torch": torch.__version__}
    stamp_path = os.path.join(out, "stamp.json")
    if os.path.exists(stamp_path) and json.load(open(stamp_path)) == stamp:
        return
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "config.json"), "w") as f:
        json.dump(config_json(c), f, indent=2)
    save_safetensors(os.path.join(out, "model.safetensors"), state, {"format": "pt", "generator": GENERATOR})
    g = torch.Generator().manual_seed(seed + 1)
    ids = {str(T): torch.randint(0, c["vocab_size"] - 1, (T,), generator=g).tolist() for T in prompts}
    with open(os.path.join(out, "ids.json"), "w") as f:
        json.dump({"prompts": ids}, f)
    L, H, D = c["n_layer"], c["n_head"], c["n_embd"] // c["n_head"]
    with torch.no_grad():
        torch.onnx.export(model, (torch.tensor([ids[str(prompts[0])]]), torch.zeros(L, 2, H, 0, D)), os.path.join(out, "model.onnx"),
                          opset_version=17, input_names=["input_ids", "past"], output_names=["logits", "present"],
                          dynamic_axes={"input_ids": {1: "n"}, "past": {3: "S"}, "present": {3: "S_n"}}, do_constant_folding=True)
    with open(stamp_path, "w") as f:
        json.dump(stamp, f)


def time_decode(model, c, ids, new):
    L, H, D = c["n_layer"], c["n_head"], c["n_embd"] // c["n_head"]
    with torch.no_grad():
        t0 = time.perf_counter()
        logits, past = model(torch.tensor([ids]), torch.zeros(L, 2, H, 0, D))
        prompt_ms = (time.perf_counter() - t0) * 1000
        out, steps = [], []
        for _ in range(new):
            nxt = int(torch.argmax(logits[0]))
            out.append(nxt)
            t0 = time.perf_counter()
            logits, past = model(torch.tensor([[nxt]]), past)
            steps.append((time.perf_counter() - t0) * 1000)
    return prompt_ms, steps, out


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--out", default=None)
    p.add_argument("--prompts", default="32,128")
    p.add_argument("--new", type=int, default=32)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--small", action="store_true")
    a = p.parse_args()
    c = TINY if a.small else SMALL_GPT2
    out = a.out or ("/tmp/attnlab-gpt2-small" if a.small else "/tmp/attnlab-gpt2")
    prompts = [int(t) for t in a.prompts.split(",")]
    state = random_state(c, a.seed)
    model = Gpt2Step(c, state).eval()
    write_folder(out, c, state, model, prompts, a.seed)
    ids = json.load(open(os.path.join(out, "ids.json")))["prompts"]
    torch.set_num_threads(1)
    results = []
    for T in prompts:
        time_decode(model, c, ids[str(T)][:8], 2)  # warm-up
        prompt_ms, steps, greedy = time_decode(model, c, ids[str(T)], a.new)
        s = sorted(steps)
        results.append({"prompt": T, "prompt_ms": prompt_ms, "decode_ms_median": s[len(s) // 2], "steps_ms": [round(x, 3) for x in steps],
                        "greedy": greedy})
    print(json.dumps({"runner": f"PyTorch {torch.__version__} native, 1 thread", "params": sum(t.numel() for t in state.values()),
                      "weights_bytes": os.path.getsize(os.path.join(out, "model.safetensors")), "results": results}))


if __name__ == "__main__":
    sys.exit(main())
