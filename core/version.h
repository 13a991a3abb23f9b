#pragma once

namespace attnlab {
// Bumped with every release; shown on the page and returned by the WASM module's version().
constexpr const char* kVersion = "0.1.0";
}  // namespace attnlab
