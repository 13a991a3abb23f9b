// The staged training step's kernel buffers, for any trainer whose attention is a MultiheadAttention:
// the WebGPU kernel (web/webgpu/) reads q, k, v and writes out, then reads dOut and writes dQ, dK, dV,
// through these views. One implementation for every lab, so WebGPU needs no per-lab glue.
#pragma once

#include <emscripten/val.h>

#include <string>

#include "layers/multihead_attention.h"

namespace attnlab::wasm {

// {B, H, T, S, D, scale, readWeights} of the attention call the trainer has prepared. readWeights: the
// model uses the attention weights themselves after the kernel (a loss on them, as the Lookup lab's
// retrieval), so a kernel outside C++ must write them back, not only the output.
emscripten::val kernel_shape_of(MultiheadAttention& mha, bool read_weights);
// A live, writable heap view: q k v weights out dOut dWeights dQ dK dV; undefined for another name
// (and for dWeights when the loss gives the weights no gradient).
emscripten::val kernel_view_of(MultiheadAttention& mha, const std::string& which);

}  // namespace attnlab::wasm
