// tensor_type.hpp: GGML tensor type ids, their block layouts, and row byte sizes.
//
// Ids, names and block sizes are from ggml (include/ggml.h@d99724f2, enum ggml_type) and
// llama.cpp (ggml/src/ggml-common.h@c392e509). Every quantized type stores its values in
// blocks of `block_elems` values taking `block_bytes` bytes; plain types are blocks of one.
#pragma once
#include <array>
#include <cstdint>
#include <string_view>

#include <tg/core/error.hpp>

namespace tg::gguf {

enum class tensor_type : std::uint32_t {
  f32 = 0, f16 = 1, q4_0 = 2, q4_1 = 3, q5_0 = 6, q5_1 = 7, q8_0 = 8, q8_1 = 9,
  q2_k = 10, q3_k = 11, q4_k = 12, q5_k = 13, q6_k = 14, q8_k = 15,
  iq2_xxs = 16, iq2_xs = 17, iq3_xxs = 18, iq1_s = 19, iq4_nl = 20, iq3_s = 21, iq2_s = 22,
  iq4_xs = 23, i8 = 24, i16 = 25, i32 = 26, i64 = 27, f64 = 28, iq1_m = 29, bf16 = 30,
  tq1_0 = 34, tq2_0 = 35, mxfp4 = 39, nvfp4 = 40, q1_0 = 41,
};

struct tensor_type_traits {
  tensor_type type;
  std::string_view name;     // ggml's spelling, as tools print it
  std::uint32_t block_elems;  // values per block; 0 when tg does not know the layout
  std::uint32_t block_bytes;  // bytes per block; 0 when tg does not know the layout
  bool dequantizable;         // dequantize_row() handles it
};

// Ids 4, 5, 31-33 and 36-38 were removed from ggml and are deliberately absent. The IQ1/IQ2
// grid types and NVFP4 are named (so errors read well) but have no layout here: we do not
// implement their block formats, so a file holding them is rejected.
inline constexpr std::array tensor_types{
    tensor_type_traits{tensor_type::f32, "F32", 1, 4, true},
    tensor_type_traits{tensor_type::f16, "F16", 1, 2, true},
    tensor_type_traits{tensor_type::q4_0, "Q4_0", 32, 18, true},
    tensor_type_traits{tensor_type::q4_1, "Q4_1", 32, 20, true},
    tensor_type_traits{tensor_type::q5_0, "Q5_0", 32, 22, true},
    tensor_type_traits{tensor_type::q5_1, "Q5_1", 32, 24, true},
    tensor_type_traits{tensor_type::q8_0, "Q8_0", 32, 34, true},
    tensor_type_traits{tensor_type::q8_1, "Q8_1", 32, 36, false},
    tensor_type_traits{tensor_type::q2_k, "Q2_K", 256, 84, true},
    tensor_type_traits{tensor_type::q3_k, "Q3_K", 256, 110, true},
    tensor_type_traits{tensor_type::q4_k, "Q4_K", 256, 144, true},
    tensor_type_traits{tensor_type::q5_k, "Q5_K", 256, 176, true},
    tensor_type_traits{tensor_type::q6_k, "Q6_K", 256, 210, true},
    tensor_type_traits{tensor_type::q8_k, "Q8_K", 256, 292, false},
    tensor_type_traits{tensor_type::iq2_xxs, "IQ2_XXS", 0, 0, false},
    tensor_type_traits{tensor_type::iq2_xs, "IQ2_XS", 0, 0, false},
    tensor_type_traits{tensor_type::iq3_xxs, "IQ3_XXS", 256, 98, false},
    tensor_type_traits{tensor_type::iq1_s, "IQ1_S", 0, 0, false},
    tensor_type_traits{tensor_type::iq4_nl, "IQ4_NL", 32, 18, false},
    tensor_type_traits{tensor_type::iq3_s, "IQ3_S", 256, 110, false},
    tensor_type_traits{tensor_type::iq2_s, "IQ2_S", 256, 82, false},
    tensor_type_traits{tensor_type::iq4_xs, "IQ4_XS", 256, 136, false},
    tensor_type_traits{tensor_type::i8, "I8", 1, 1, false},
    tensor_type_traits{tensor_type::i16, "I16", 1, 2, false},
    tensor_type_traits{tensor_type::i32, "I32", 1, 4, false},
    tensor_type_traits{tensor_type::i64, "I64", 1, 8, false},
    tensor_type_traits{tensor_type::f64, "F64", 1, 8, false},
    tensor_type_traits{tensor_type::iq1_m, "IQ1_M", 0, 0, false},
    tensor_type_traits{tensor_type::bf16, "BF16", 1, 2, true},
    tensor_type_traits{tensor_type::tq1_0, "TQ1_0", 256, 54, false},
    tensor_type_traits{tensor_type::tq2_0, "TQ2_0", 256, 66, false},
    tensor_type_traits{tensor_type::mxfp4, "MXFP4", 32, 17, false},
    tensor_type_traits{tensor_type::nvfp4, "NVFP4", 0, 0, false},
    tensor_type_traits{tensor_type::q1_0, "Q1_0", 128, 18, false},
};

// The traits of a type id read from a file, or nullptr when the id is unknown or removed.
constexpr const tensor_type_traits* find_tensor_type(std::uint32_t id) {
  for (const auto& t : tensor_types)
    if (static_cast<std::uint32_t>(t.type) == id) return &t;
  return nullptr;
}

// The traits of an enumerator; every enumerator is in the table.
constexpr const tensor_type_traits& traits_of(tensor_type type) {
  const auto* t = find_tensor_type(static_cast<std::uint32_t>(type));
  if (t == nullptr) TG_UNREACHABLE("tensor_type enumerator missing from tensor_types");
  return *t;
}

constexpr std::string_view tensor_type_name(tensor_type type) { return traits_of(type).name; }
constexpr bool has_known_layout(tensor_type type) { return traits_of(type).block_bytes != 0; }
constexpr bool is_dequantizable(tensor_type type) { return traits_of(type).dequantizable; }

// Bytes taken by a row of `n_elements` values of `type`. Throws usage_error when the layout is
// unknown, the row is not a whole number of blocks, or the size overflows 64 bits.
inline std::uint64_t row_size_bytes(tensor_type type, std::uint64_t n_elements) {
  const auto& t = traits_of(type);
  if (t.block_bytes == 0)
    throw usage_error(str("row_size_bytes: tensor type ", t.name,
                          " has no known block layout (unsupported tensor type)"));
  if (n_elements % t.block_elems != 0)
    throw usage_error(str("row_size_bytes: a row of ", n_elements, " ", t.name,
                          " values is not a whole number of ", t.block_elems, "-value blocks"));
  const std::uint64_t blocks = n_elements / t.block_elems;
  std::uint64_t bytes = 0;
  if (__builtin_mul_overflow(blocks, std::uint64_t{t.block_bytes}, &bytes))
    throw usage_error(str("row_size_bytes: a row of ", n_elements, " ", t.name,
                          " values is larger than 2^64 bytes"));
  return bytes;
}

}  // namespace tg::gguf
