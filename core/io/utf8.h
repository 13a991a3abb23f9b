// Well-formed UTF-8 (no overlong forms, no surrogates, nothing past U+10FFFF), as Rust's str::from_utf8
// and JS's TextDecoder({fatal: true}) require: the one check of the file readers (safetensors headers,
// zip entry names, pickled strings).
#pragma once

#include <cstddef>
#include <cstdint>

namespace attnlab {

bool is_utf8(const std::uint8_t* s, std::size_t n);

}  // namespace attnlab
