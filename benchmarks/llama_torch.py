#!/usr/bin/python3
"""The files of the Llama-family decode benchmark (issue 37, Proof "Speed"; benchmarks/llama.mjs runs it).

Random weights in a real model's shape (HF's init: normal(0, 0.02), RMSNorm weights 1, biases 0), seeded,
written into --out (skipped when its stamp.json says it holds this seed, shape and prompts):
  config.json, model.safetensors  the checkpoint as Hugging Face lays it out (LlamaForCausalLM /
                                  Qwen2ForCausalLM names), every tensor BF16: what Attention Lab loads
  ids.json                        {prompts: {T: ids}} seeded ids in [0, V), and {greedy: {T: ids}}: the
                                  --new greedy ids of the plain-PyTorch step below (weights widened to
                                  float32), the other runners' check
  model.onnx (+ model.onnx.data)  torch.onnx.export (opset 17) of one cached step of that plain-PyTorch
                                  Llama, float32 (the BF16 values widened): input_ids [1, n] and, per layer,
                                  past_key_values.{l}.key / .value [1, Hkv, S, D] -> logits [1, V] (the last
                                  row) and present.{l}.key / .value [1, Hkv, S + n, D], Optimum's names;
                                  projections as MatMul on [in, out] initializers, as Optimum exports them
  model_q8.onnx                   the same graph quantized as transformers.js's default "q8" (its
                                  scripts/quantize.py: onnxruntime.quantization's dynamic IntegerOps mode,
                                  int8 weights, per tensor). onnxruntime's Python package is not installable
                                  here, so quantize_q8() below writes the pattern quantize_dynamic writes,
                                  with the `onnx` package: every MatMul on a weight becomes
                                  DynamicQuantizeLinear(x) -> MatMulInteger(x_q, W_q, x_zp, W_zp) -> Cast
                                  -> Mul(x_scale * W_scale); W_q = round(W / s) in [-127, 127] with
                                  s = max|W| / 127 and zero point 0 (symmetric int8); one
                                  DynamicQuantizeLinear per input shared by the MatMuls that read it (q/k/v,
                                  gate/up). The embedding's Gather stays float32 (one row per token).
The ONNX files are written only with --onnx (Qwen2.5-0.5B's float32 export is 2.5 GB: not made by default).

The step is written from modeling_llama.py / modeling_qwen2.py with tests/fixtures/make_llama_fixtures.py's
pieces (rotary as rotate_half, repeat_kv), plus a key/value cache.

Usage: /usr/bin/python3 benchmarks/llama_torch.py [--shape smollm2-135m | qwen2.5-0.5b | tiny] [--out DIR]
         [--prompts 32,128] [--new 64] [--onnx] [--seed 0]
"""
import argparse
import json
import math
import os
import struct
import sys

os.environ.setdefault("OMP_WAIT_POLICY", "passive")  # before torch loads libgomp  # noqa: E402
import torch  # noqa: E402

GENERATOR = "benchmarks/llama_torch.py"
# config.json as the Hub has it for each model (the fields the decoders read), vocab as given.
SHAPES = {
    "smollm2-135m": {"model_type": "llama", "architectures": ["LlamaForCausalLM"], "vocab_size": 49152, "hidden_size": 576,
                     "num_hidden_layers": 30, "num_attention_heads": 9, "num_key_value_heads": 3, "head_dim": 64,
                     "intermediate_size": 1536, "max_position_embeddings": 8192, "rms_norm_eps": 1e-5, "rope_theta": 100000.0,
                     "rope_scaling": None, "attention_bias": False, "mlp_bias": False, "tie_word_embeddings": True,
                     "hidden_act": "silu", "bos_token_id": 0, "eos_token_id": 0, "torch_dtype": "bfloat16"},
    "qwen2.5-0.5b": {"model_type": "qwen2", "architectures": ["Qwen2ForCausalLM"], "vocab_size": 151936, "hidden_size": 896,
                     "num_hidden_layers": 24, "num_attention_heads": 14, "num_key_value_heads": 2, "intermediate_size": 4864,
                     "max_position_embeddings": 32768, "rms_norm_eps": 1e-6, "rope_theta": 1000000.0, "rope_scaling": None,
                     "tie_word_embeddings": True, "use_sliding_window": False, "sliding_window": 32768, "max_window_layers": 21,
                     "hidden_act": "silu", "bos_token_id": 151643, "eos_token_id": 151643, "torch_dtype": "bfloat16"},
    # A check of the script and of benchmarks/llama.mjs in seconds.
    "tiny": {"model_type": "llama", "architectures": ["LlamaForCausalLM"], "vocab_size": 512, "hidden_size": 64,
             "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 16,
             "intermediate_size": 96, "max_position_embeddings": 512, "rms_norm_eps": 1e-5, "rope_theta": 10000.0,
             "rope_scaling": None, "attention_bias": False, "mlp_bias": False, "tie_word_embeddings": True,
             "hidden_act": "silu", "bos_token_id": 0, "eos_token_id": 0, "torch_dtype": "bfloat16"},
}


def head_dim(c):
    return c.get("head_dim") or c["hidden_size"] // c["num_attention_heads"]


def random_weights(c, seed):
    """The state dict save_pretrained writes, BF16 (no lm_head: every shape here is tied)."""
    g = torch.Generator().manual_seed(seed)
    V, E, F, L = c["vocab_size"], c["hidden_size"], c["intermediate_size"], c["num_hidden_layers"]
    H, HKV, D = c["num_attention_heads"], c["num_key_value_heads"], head_dim(c)
    qwen2 = c["model_type"] == "qwen2"
    normal = lambda *shape: (torch.randn(*shape, generator=g) * 0.02).to(torch.bfloat16)
    ones = lambda n: torch.ones(n, dtype=torch.bfloat16)
    w = {"model.embed_tokens.weight": normal(V, E), "model.norm.weight": ones(E)}
    for l in range(L):
        p = f"model.layers.{l}."
        w[p + "input_layernorm.weight"] = ones(E)
        for name, out in (("q_proj", H * D), ("k_proj", HKV * D), ("v_proj", HKV * D)):
            w[p + f"self_attn.{name}.weight"] = normal(out, E)
            if qwen2:  # HF's init puts them at 0; small random values keep the bias path honest
                w[p + f"self_attn.{name}.bias"] = normal(out)
        w[p + "self_attn.o_proj.weight"] = normal(E, H * D)
        w[p + "post_attention_layernorm.weight"] = ones(E)
        w[p + "mlp.gate_proj.weight"] = normal(F, E)
        w[p + "mlp.up_proj.weight"] = normal(F, E)
        w[p + "mlp.down_proj.weight"] = normal(E, F)
    return w


def save_bf16_safetensors(path, tensors):
    """safetensors with BF16 data (torch 1.13 has no bfloat16 numpy: its bits go as int16)."""
    header, offset = {"__metadata__": {"format": "pt", "generator": GENERATOR}}, 0
    for key in sorted(tensors):
        n = tensors[key].numel() * 2
        header[key] = {"dtype": "BF16", "shape": list(tensors[key].shape), "data_offsets": [offset, offset + n]}
        offset += n
    text = json.dumps(header, separators=(",", ":"))
    text += " " * ((8 - (8 + len(text)) % 8) % 8)
    with open(path + ".tmp", "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text.encode())
        for key in sorted(tensors):
            f.write(tensors[key].contiguous().view(torch.int16).numpy().tobytes())
    os.replace(path + ".tmp", path)


class LlamaStep(torch.nn.Module):
    """One cached pass of a Llama / Qwen2 (float32): input_ids [1, n], per layer past key and value
    [1, Hkv, S0, D] -> logits [1, V] of the last row, per layer present key and value [1, Hkv, S0 + n, D]."""

    def __init__(self, c, w):
        super().__init__()
        self.c = c
        D = head_dim(c)
        self.register_buffer("inv_freq", 1.0 / (c["rope_theta"] ** (torch.arange(0, D, 2, dtype=torch.int64).float() / D)))
        f = lambda name: w[name].float()
        self.embed = torch.nn.Parameter(f("model.embed_tokens.weight"), requires_grad=False)
        self.unembed_t = torch.nn.Parameter(self.embed.data.t().contiguous(), requires_grad=False)  # tied: E x V for MatMul
        self.norm = torch.nn.Parameter(f("model.norm.weight"), requires_grad=False)
        self.layers = torch.nn.ModuleList()
        for l in range(c["num_hidden_layers"]):
            p, m = f"model.layers.{l}.", torch.nn.Module()
            for name, key in (("ln1", "input_layernorm"), ("ln2", "post_attention_layernorm")):
                setattr(m, name, torch.nn.Parameter(f(p + key + ".weight"), requires_grad=False))
            for name, key in (("q", "self_attn.q_proj"), ("k", "self_attn.k_proj"), ("v", "self_attn.v_proj"), ("o", "self_attn.o_proj"),
                              ("gate", "mlp.gate_proj"), ("up", "mlp.up_proj"), ("down", "mlp.down_proj")):
                # [in, out]: x @ W^T as one MatMul on an initializer, as Optimum's exports have it
                setattr(m, name, torch.nn.Parameter(f(p + key + ".weight").t().contiguous(), requires_grad=False))
                if p + key + ".bias" in w:
                    setattr(m, name + "_b", torch.nn.Parameter(f(p + key + ".bias"), requires_grad=False))
            self.layers.append(m)

    def rms(self, x, weight):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.c["rms_norm_eps"]) * weight

    def forward(self, input_ids, *past):
        c = self.c
        H, HKV, D = c["num_attention_heads"], c["num_key_value_heads"], head_dim(c)
        n, S0 = input_ids.shape[1], past[0].shape[2]
        pos = torch.arange(n) + S0
        S = S0 + n
        x = self.embed[input_ids]  # [1, n, E]
        angles = pos.float()[:, None] * self.inv_freq[None, :]
        emb = torch.cat((angles, angles), dim=-1)
        cos, sin = emb.cos(), emb.sin()  # [n, D]

        def rotary(t):
            half = t.shape[-1] // 2
            return t * cos + torch.cat((-t[..., half:], t[..., :half]), dim=-1) * sin
        causal = torch.arange(S)[None, :] <= pos[:, None]  # [n, S]
        present = []
        for l, m in enumerate(self.layers):
            a = self.rms(x, m.ln1)
            proj = lambda name: a @ getattr(m, name) + getattr(m, name + "_b") if hasattr(m, name + "_b") else a @ getattr(m, name)
            q = proj("q").view(1, n, H, D).transpose(1, 2)
            k = proj("k").view(1, n, HKV, D).transpose(1, 2)
            v = proj("v").view(1, n, HKV, D).transpose(1, 2)
            q, k = rotary(q), rotary(k)
            k = torch.cat([past[2 * l], k], dim=2)
            v = torch.cat([past[2 * l + 1], v], dim=2)
            present += [k, v]
            g = H // HKV  # repeat_kv
            kr = k[:, :, None].expand(1, HKV, g, S, D).reshape(1, H, S, D)
            vr = v[:, :, None].expand(1, HKV, g, S, D).reshape(1, H, S, D)
            scores = (q @ kr.transpose(2, 3)) / math.sqrt(D)
            weights = torch.softmax(scores.masked_fill(~causal, float("-inf")), dim=-1)
            x = x + (weights @ vr).transpose(1, 2).reshape(1, n, H * D) @ m.o
            h = self.rms(x, m.ln2)
            x = x + (torch.nn.functional.silu(h @ m.gate) * (h @ m.up)) @ m.down
        logits = self.rms(x[:, -1, :], self.norm) @ self.unembed_t  # [1, V]
        return (logits, *present)


def empty_past(c):
    return [torch.zeros(1, c["num_key_value_heads"], 0, head_dim(c)) for _ in range(2 * c["num_hidden_layers"])]


def greedy(model, c, ids, new):
    with torch.no_grad():
        out = model(torch.tensor([ids]), *empty_past(c))
        written = []
        for _ in range(new):
            nxt = int(torch.argmax(out[0][0]))
            written.append(nxt)
            out = model(torch.tensor([[nxt]]), *out[1:])
    return written


def export_onnx(model, c, path, example_ids):
    L = c["num_hidden_layers"]
    past_names = [f"past_key_values.{l}.{kv}" for l in range(L) for kv in ("key", "value")]
    present_names = [f"present.{l}.{kv}" for l in range(L) for kv in ("key", "value")]
    axes = {"input_ids": {1: "n"}, **{name: {2: "S"} for name in past_names}, **{name: {2: "S_n"} for name in present_names}}
    big = sum(p.numel() for p in model.parameters()) * 4 > 1.8e9  # protobuf's 2 GB: weights beside the graph
    with torch.no_grad():
        torch.onnx.export(model, (torch.tensor([example_ids]), *empty_past(c)), path, opset_version=17,
                          input_names=["input_ids", *past_names], output_names=["logits", *present_names],
                          dynamic_axes=axes, do_constant_folding=True)
    if big:  # torch 1.13 writes the weights as files beside model.onnx when it is too big; one file instead
        import onnx
        m = onnx.load(path)
        onnx.save_model(m, path, save_as_external_data=True, all_tensors_to_one_file=True, location=os.path.basename(path) + ".data")


def quantize_q8(src, dst):
    """onnxruntime.quantization.quantize_dynamic's IntegerOps MatMul pattern (weight_type QInt8, per tensor,
    symmetric; activations uint8 through DynamicQuantizeLinear), written with the onnx package."""
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    m = onnx.load(src)
    g = m.graph
    inits = {t.name: t for t in g.initializer}
    readers = {}
    for node in g.node:
        for name in node.input:
            readers[name] = readers.get(name, 0) + 1
    nodes, quantized_inputs, weight_q, drop = [], {}, {}, set()
    for node in g.node:
        b = node.input[1] if node.op_type == "MatMul" else None
        if b not in inits or len(inits[b].dims) != 2:
            nodes.append(node)
            continue
        a = node.input[0]
        if a not in quantized_inputs:  # one DynamicQuantizeLinear per input, shared (q/k/v, gate/up)
            names = (a + "_quantized", a + "_scale", a + "_zero_point")
            nodes.append(helper.make_node("DynamicQuantizeLinear", [a], list(names), name=a + "_QuantizeLinear"))
            quantized_inputs[a] = names
        if b not in weight_q:
            w = numpy_helper.to_array(inits[b]).astype(np.float32)
            scale = np.float32(max(float(np.abs(w).max()), 1e-12) / 127.0)
            q = np.clip(np.rint(w / scale), -127, 127).astype(np.int8)
            g.initializer.extend([numpy_helper.from_array(q, b + "_quantized"),
                                  numpy_helper.from_array(np.array(scale, dtype=np.float32), b + "_scale"),
                                  numpy_helper.from_array(np.array(0, dtype=np.int8), b + "_zero_point")])
            weight_q[b] = (b + "_quantized", b + "_scale", b + "_zero_point")
            drop.add(b)
        aq, ascale, azp = quantized_inputs[a]
        bq, bscale, bzp = weight_q[b]
        out, base = node.output[0], node.name or node.output[0]
        nodes += [helper.make_node("MatMulInteger", [aq, bq, azp, bzp], [out + "_output_quantized"], name=base + "_quant"),
                  helper.make_node("Cast", [out + "_output_quantized"], [out + "_output_quantized_cast_output"], to=TensorProto.FLOAT,
                                   name=base + "_quant_output_cast"),
                  helper.make_node("Mul", [ascale, bscale], [out + "_scales_mul"], name=base + "_quant_scales_mul"),
                  helper.make_node("Mul", [out + "_output_quantized_cast_output", out + "_scales_mul"], [out], name=base + "_quant_output_scale_mul")]
    del g.node[:]
    g.node.extend(nodes)
    keep = [t for t in g.initializer if t.name not in drop]
    del g.initializer[:]
    g.initializer.extend(keep)
    onnx.save_model(m, dst)
    return len(weight_q)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--shape", default="smollm2-135m", choices=sorted(SHAPES))
    p.add_argument("--out", default=None)
    p.add_argument("--prompts", default="32,128")
    p.add_argument("--new", type=int, default=64)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--onnx", action="store_true")
    a = p.parse_args()
    c = SHAPES[a.shape]
    out = a.out or f"/tmp/attnlab-{a.shape}"
    prompts = [int(t) for t in a.prompts.split(",")]
    stamp = {"generator": GENERATOR, "config": c, "seed": a.seed, "prompts": prompts, "new": a.new, "onnx": a.onnx, "torch": torch.__version__}
    stamp_path = os.path.join(out, "stamp.json")
    if os.path.exists(stamp_path) and json.load(open(stamp_path)) == stamp:
        print(f"{out}: up to date")
        return
    os.makedirs(out, exist_ok=True)
    w = random_weights(c, a.seed)
    with open(os.path.join(out, "config.json"), "w") as f:
        json.dump(c, f, indent=2)
    save_bf16_safetensors(os.path.join(out, "model.safetensors"), w)
    g = torch.Generator().manual_seed(a.seed + 1)
    ids = {str(T): torch.randint(0, c["vocab_size"], (T,), generator=g).tolist() for T in prompts}
    model = LlamaStep(c, w).eval()
    del w
    torch.set_num_threads(1)
    written = {T: greedy(model, c, ids[T], a.new) for T in ids}
    with open(os.path.join(out, "ids.json"), "w") as f:
        json.dump({"prompts": ids, "greedy": written}, f)
    if a.onnx:
        export_onnx(model, c, os.path.join(out, "model.onnx"), ids[str(prompts[0])])
        n = quantize_q8(os.path.join(out, "model.onnx"), os.path.join(out, "model_q8.onnx"))
        print(f"model_q8.onnx: {n} MatMuls quantized")
    with open(stamp_path, "w") as f:
        json.dump(stamp, f)
    print(f"{out}: written ({sum(os.path.getsize(os.path.join(out, x)) for x in os.listdir(out)) / 2**20:.0f} MB)")


if __name__ == "__main__":
    sys.exit(main())
