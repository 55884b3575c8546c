// dequant_kernel.cpp: the per-type unpacking of ggml-quants.c's dequantize_row_* as kernel_builder expressions.
#include "llm/model/dequant_kernel.hpp"

#include <tg/core/error.hpp>

namespace tg::model {
namespace {

using gguf::tensor_type;

// Small typed loads: a byte as int32, a signed byte as float, an fp16 field as float.
kvalue u8(kernel_builder& kb, int slot, kvalue byte) { return kb.cast(dtype::int32, kb.load<std::uint8_t>(slot, byte)); }
kvalue i8f(kernel_builder& kb, int slot, kvalue byte) { return kb.cast(dtype::float32, kb.load<std::int8_t>(slot, byte)); }
// `half_index` counts 2-byte units; every fp16 field of these blocks sits at an even offset.
kvalue f16(kernel_builder& kb, int slot, kvalue half_index) {
  return kb.cast(dtype::float32, kb.load(slot, dtype::float16, half_index));
}
// A bf16 value (its bits are the top half of a float32), by its index in 2-byte units.
kvalue bf16(kernel_builder& kb, int slot, kvalue half_index) {
  return kb.cast(dtype::float32, kb.load(slot, dtype::bfloat16, half_index));
}
kvalue i32(kernel_builder& kb, kvalue index) { return kb.cast(dtype::int32, index); }
kvalue f32(kernel_builder& kb, kvalue v) { return kb.cast(dtype::float32, v); }

// Q4_0 / Q4_1 / Q5_0 / Q5_1 low nibble for j < 16, high nibble for j >= 16, of byte j % 16.
kvalue nibble_of_32(kernel_builder& kb, int slot, kvalue qs_byte0, kvalue j) {
  auto byte = u8(kb, slot, qs_byte0 + j % 16);
  return (byte >> i32(kb, (j / 16) * 4)) & 15;
}

// Q5_1: bit j of the 4-byte little-endian mask at `qh_byte0`, as 16 or 0.
kvalue fifth_bit_of_32(kernel_builder& kb, int slot, kvalue qh_byte0, kvalue j) {
  return ((u8(kb, slot, qh_byte0 + j / 8) >> i32(kb, j % 8)) & 1) << 4;
}

// Q4_K / Q5_K: the 6-bit scale and min of sub-block sb (0..7) from the 12 bytes at `at`, as int32.
struct scale_min {
  kvalue scale, min;
};
scale_min k_scale_min(kernel_builder& kb, int slot, kvalue at, kvalue sb) {
  auto i = sb % 4;
  auto low = u8(kb, slot, at + i), mid = u8(kb, slot, at + i + 4), high = u8(kb, slot, at + i + 8);
  auto first = sb < kb.index(4);
  auto sc = kb.where(first, low & 63, (high & 15) | ((low >> 6) << 4));
  auto mn = kb.where(first, mid & 63, (high >> 4) | ((mid >> 6) << 4));
  return {sc, mn};
}

// The same from the three little-endian words of the 12 bytes (word index `word0`), as
// llama.cpp unpacks them: each sub-block's scale and min is one byte of a word, so with sb
// constant the 8 scales (and mins) are alike expressions of three shared words.
scale_min k_scale_min_words(kernel_builder& kb, int slot, kvalue word0, std::int64_t sb) {
  auto w = [&](std::int64_t i) { return kb.load<std::uint32_t>(slot, word0 + i); };
  auto c = [&](std::uint32_t v) { return kb.constant(dtype::uint32, double(v)); };
  kvalue sc, mn;
  if (sb < 4) {
    sc = w(0) & c(0x3f3f3f3fu), mn = w(1) & c(0x3f3f3f3fu);
  } else {
    sc = (w(2) & c(0x0f0f0f0fu)) | ((w(0) >> c(2)) & c(0x30303030u));
    mn = ((w(2) >> c(4)) & c(0x0f0f0f0fu)) | ((w(1) >> c(2)) & c(0x30303030u));
  }
  auto byte_of = [&](kvalue word) { return kb.cast(dtype::int32, (word >> c(std::uint32_t(8 * (sb % 4)))) & c(255)); };
  return {byte_of(sc), byte_of(mn)};
}

}  // namespace

std::int64_t group_size(tensor_type type, std::int64_t cols) {
  switch (type) {
    case tensor_type::f32: case tensor_type::f16: case tensor_type::bf16:  // no scales: long groups, less loop overhead
      for (std::int64_t g : {256, 128, 64, 32})
        if (cols % g == 0) return g;
      return cols;
    case tensor_type::q8_0: case tensor_type::q4_0: case tensor_type::q5_0: case tensor_type::q4_1: case tensor_type::q5_1:
      return cols % 256 == 0 ? 256 : 32;
    case tensor_type::q4_k: case tensor_type::q5_k: case tensor_type::q6_k: case tensor_type::q2_k: case tensor_type::q3_k:
      return 32;
    default: throw usage_error(str("dequant kernel: tensor type ", gguf::tensor_type_name(type), " is not supported"));
  }
}

namespace {

// The value j (< 32) of 32-value group g; for plain floats g and j as group_size gives them.
kvalue dequant32(kernel_builder& kb, int slot, tensor_type type, std::int64_t row_bytes, kvalue row, kvalue g, kvalue j) {
  const std::int64_t half_row = row_bytes / 2;
  switch (type) {
    case tensor_type::f32: {
      std::int64_t cols = row_bytes / 4, gs = group_size(type, cols);
      return kb.load<float>(slot, row * cols + g * gs + j);
    }
    case tensor_type::f16: {
      std::int64_t cols = row_bytes / 2, gs = group_size(type, cols);
      return f16(kb, slot, row * cols + g * gs + j);
    }
    case tensor_type::bf16: {
      std::int64_t cols = row_bytes / 2, gs = group_size(type, cols);
      return bf16(kb, slot, row * cols + g * gs + j);
    }
    case tensor_type::q8_0: {  // 34 bytes: d, 32 int8
      auto d = f16(kb, slot, row * half_row + g * 17);
      return d * i8f(kb, slot, row * row_bytes + g * 34 + 2 + j);
    }
    case tensor_type::q4_0: {  // 18 bytes: d, 16 bytes of nibbles
      auto d = f16(kb, slot, row * half_row + g * 9);
      auto q = nibble_of_32(kb, slot, row * row_bytes + g * 18 + 2, j);
      return d * f32(kb, q - 8);
    }
    case tensor_type::q5_0: {  // 22 bytes: d, qh (4 bytes), 16 bytes of nibbles
      auto base = row * row_bytes + g * 22;
      auto d = f16(kb, slot, row * half_row + g * 11);
      auto high = (u8(kb, slot, base + 2 + j / 8) >> i32(kb, j % 8)) & 1;
      auto q = nibble_of_32(kb, slot, base + 6, j) | (high << 4);
      return d * f32(kb, q - 16);
    }
    case tensor_type::q4_1: {  // 20 bytes: d, m, 16 bytes of nibbles
      auto d = f16(kb, slot, row * half_row + g * 10);
      auto m = f16(kb, slot, row * half_row + g * 10 + 1);
      auto q = nibble_of_32(kb, slot, row * row_bytes + g * 20 + 4, j);
      return f32(kb, q) * d + m;
    }
    case tensor_type::q5_1: {  // 24 bytes: d, m, qh (4 bytes), 16 bytes of nibbles
      auto base = row * row_bytes + g * 24;
      auto d = f16(kb, slot, row * half_row + g * 12);
      auto m = f16(kb, slot, row * half_row + g * 12 + 1);
      auto q = nibble_of_32(kb, slot, base + 8, j) | fifth_bit_of_32(kb, slot, base + 4, j);
      return f32(kb, q) * d + m;
    }
    case tensor_type::q4_k: case tensor_type::q5_k: {  // 144/176 bytes, 8 sub-blocks of 32
      const std::int64_t bytes = type == tensor_type::q4_k ? 144 : 176, qs_at = type == tensor_type::q4_k ? 16 : 48;
      auto blk = g / 8, sb = g % 8;
      auto base = row * row_bytes + blk * bytes;
      auto d = f16(kb, slot, row * half_row + blk * (bytes / 2));
      auto dmin = f16(kb, slot, row * half_row + blk * (bytes / 2) + 1);
      auto [sc, mn] = k_scale_min(kb, slot, base + 4, sb);
      auto q = (u8(kb, slot, base + qs_at + (sb / 2) * 32 + j) >> i32(kb, (sb % 2) * 4)) & 15;
      if (type == tensor_type::q5_k) q = q | (((u8(kb, slot, base + 16 + j) >> i32(kb, sb)) & 1) << 4);
      return d * f32(kb, sc) * f32(kb, q) - dmin * f32(kb, mn);
    }
    case tensor_type::q6_k: {  // 210 bytes: ql[128], qh[64], int8 scales[16] (one per 16 values), d
      auto blk = g / 8, sg = g % 8;  // group sg covers values 32 sg .. 32 sg + 31 of the block
      auto base = row * row_bytes + blk * 210;
      auto half = sg / 4, quarter = sg % 4;
      auto ql = u8(kb, slot, base + half * 64 + (quarter % 2) * 32 + j);
      auto low = (ql >> i32(kb, (quarter / 2) * 4)) & 15;
      auto high = (u8(kb, slot, base + 128 + half * 32 + j) >> i32(kb, quarter * 2)) & 3;
      auto d = f16(kb, slot, row * half_row + blk * 105 + 104);
      // The scale of j's 16-value half as a select, not a load at j / 16: with j a vector of
      // lanes the select stays two scalar loads, where j / 16 would be a gather.
      auto sc_at = base + 192 + sg * 2;
      auto sc = kb.where(j < kb.index(16), i8f(kb, slot, sc_at), i8f(kb, slot, sc_at + 1));
      return d * sc * f32(kb, (low | (high << 4)) - 32);
    }
    // Q2_K / Q3_K: 16 sub-blocks of 16. Group sg (0..7) is the 32 values 32 sg .. 32 sg + 31 of
    // the block: half n = sg / 4 and bit shift 2 (sg % 4) of the 2-bit quants in qs[32n + j],
    // sub-block (scale) 2 sg + j / 16.
    case tensor_type::q2_k: {  // 84 bytes: scales[16] (low nibble scale, high min), qs[64], d, dmin
      auto blk = g / 8, sg = g % 8;
      auto base = row * row_bytes + blk * 84;
      auto sc_byte = u8(kb, slot, base + sg * 2 + j / 16);
      auto q = (u8(kb, slot, base + 16 + (sg / 4) * 32 + j) >> i32(kb, (sg % 4) * 2)) & 3;
      auto d = f16(kb, slot, row * half_row + blk * 42 + 40);
      auto dmin = f16(kb, slot, row * half_row + blk * 42 + 41);
      return d * f32(kb, sc_byte & 15) * f32(kb, q) - dmin * f32(kb, sc_byte >> 4);
    }
    case tensor_type::q3_k: {  // 110 bytes: hmask[32], qs[64], scales[12] (6-bit, offset 32), d
      auto blk = g / 8, sg = g % 8;
      auto base = row * row_bytes + blk * 110;
      auto i = sg * 2 + j / 16;  // scale index 0..15
      auto sc_low = (u8(kb, slot, base + 96 + i % 8) >> i32(kb, (i / 8) * 4)) & 15;
      auto sc_high = (u8(kb, slot, base + 96 + 8 + i % 4) >> i32(kb, (i / 4) * 2)) & 3;
      auto low = (u8(kb, slot, base + 32 + (sg / 4) * 32 + j) >> i32(kb, (sg % 4) * 2)) & 3;
      auto high = (u8(kb, slot, base + j) >> i32(kb, sg)) & 1;  // cleared means -4
      auto d = f16(kb, slot, row * half_row + blk * 55 + 54);
      return d * f32(kb, (sc_low | (sc_high << 4)) - 32) * f32(kb, (low | (high << 2)) - 4);
    }
    default:
      throw usage_error(str("dequant kernel: tensor type ", gguf::tensor_type_name(type), " is not supported"));
  }
}

}  // namespace

bool has_lane_dequant(tensor_type type) {
  return type == tensor_type::f32 || type == tensor_type::f16 || type == tensor_type::bf16;
}

kvalue dequant_lanes(kernel_builder& kb, int slot, tensor_type type, std::int64_t row_bytes, kvalue row, kvalue g,
                     kvalue j) {
  if (!has_lane_dequant(type))
    throw usage_error(str("dequant_lanes: tensor type ", gguf::tensor_type_name(type), " has no lane form"));
  const std::int64_t cols = row_bytes / gguf::traits_of(type).block_bytes;
  auto at = row * cols + g * 32 + j;  // value g * 32 + j of the row
  if (type == tensor_type::f32) return kb.load<float>(slot, at);
  return type == tensor_type::f16 ? f16(kb, slot, at) : bf16(kb, slot, at);
}

bool has_int_form(tensor_type type) {
  switch (type) {
    case tensor_type::q8_0: case tensor_type::q4_0: case tensor_type::q4_1: case tensor_type::q5_0: case tensor_type::q5_1:
    case tensor_type::q4_k: case tensor_type::q5_k: case tensor_type::q6_k:
      return true;
    default:
      return false;
  }
}

std::int64_t int_form_group(tensor_type type) {
  return type == tensor_type::q4_k || type == tensor_type::q5_k || type == tensor_type::q6_k ? 256 : 32;
}

// Q4_0/1, Q5_0/1 and Q6_K cut their bit fields out as uint8 (a byte vector: shift and mask
// on 32 values at once) and widen at the end. Q4_K/Q5_K widen each loaded byte to int16 first:
// x86 then zero-extends straight from memory (vpmovzxbw m128, once for all the sub-blocks
// sharing the bytes) where widening a byte register crosses lanes (llvm-mca, znver3: 41
// cycles per Q4_K super-block instead of 47). With `sub` a constant the scale unpacking
// folds to a few scalar operations.
int_weight int_form(kernel_builder& kb, int slot, tensor_type type, std::int64_t row_bytes, kvalue row, kvalue blk,
                    kvalue sub, kvalue j, kvalue j_pair, bool unsigned_q, bool byte_bits) {
  const std::int64_t half_row = row_bytes / 2;
  auto byte = [&](kvalue at) { return kb.load<std::uint8_t>(slot, at); };
  auto bits = [&](kvalue count) { return kb.cast(dtype::uint8, count); };
  auto wide = [&](kvalue v) { return kb.cast(dtype::int16, v); };
  switch (type) {
    case tensor_type::q8_0:
      return {kb.cast(dtype::int32, kb.load<std::int8_t>(slot, row * row_bytes + blk * 34 + 2 + j)),
              f16(kb, slot, row * half_row + blk * 17), {}};
    case tensor_type::q4_0: case tensor_type::q4_1: case tensor_type::q5_0: case tensor_type::q5_1: {
      // 32 values: d (and m), for Q5 a 32-bit mask of fifth bits, 16 bytes of nibbles (value j:
      // byte j % 16, low nibble for j < 16). Over 16 lanes of pairs j / 16 varies by lane; over
      // 8, a half's j / 16 is a constant.
      const bool five = type == tensor_type::q5_0 || type == tensor_type::q5_1;
      const bool min = type == tensor_type::q4_1 || type == tensor_type::q5_1;
      const std::int64_t bytes = (min ? 4 : 2) + (five ? 4 : 0) + 16;
      auto base = row * row_bytes + blk * bytes;
      // Indices from j_pair (the lane's first value: pairs and quads never straddle 16), so a
      // lane's bytes are contiguous to the codegen (a GPU's quad: one 4-byte load, not four) and
      // its half is one test. Low or high nibble by a select, not a shift by a per-lane count:
      // x86 has no per-byte variable shift, and widening to words for one cost three
      // instructions a block (matvec_types_bench: Q4_0 at the AVX2 level 16.5 -> 24 GB/s).
      auto packed = byte(base + (bytes - 16) + j_pair % 16 + (j - j_pair));
      auto nib = kb.where(j_pair < kb.index(16), packed & 15, packed >> bits(kb.index(4)));
      auto d = f16(kb, slot, row * half_row + blk * (bytes / 2));
      auto m = [&] { return -f16(kb, slot, row * half_row + blk * (bytes / 2) + 1); };
      // Q5: whether value j's fifth bit is set. The mask as two 16-bit halves (even byte offsets
      // in every row and block); bit j % 16 is tested against a constant per lane, (mask & 1 <<
      // j % 16) != 0, all in 16-bit lanes: AVX2 has no per-lane 16-bit shift, and shifting the
      // mask in 32-bit lanes then packing back took 16 cycles per block (llvm-mca, znver3).
      auto fifth_set = [&] {
        auto mask = kb.load<std::uint16_t>(slot, row * half_row + blk * (bytes / 2) + (min ? 2 : 1) + j_pair / 16);
        auto bit = kb.constant(dtype::uint16, 1) << kb.cast(dtype::uint16, j % 16);
        return kb.binary(ast::op::cmpne, mask & bit, kb.constant(dtype::uint16, 0));
      };
      // byte_bits: the same test on the mask's byte j / 8 against bit j % 8, all in byte lanes:
      // with AVX2 a broadcast, one vpshufb, vpand and vpcmpeqb, where the 16-bit halves took
      // two broadcasts, two tests, a pack and a lane fix-up (llvm-mca, znver3: a Q5_0 block in
      // 5.6 cycles, not 6.5; matvec_types_bench, 2 threads, Q5_0 12-13 -> 14-17 GB/s).
      auto fifth_byte_set = [&] {
        auto mask = byte(row * row_bytes + blk * bytes + (min ? 4 : 2) + j / 8);
        auto bit = kb.constant(dtype::uint8, 1) << kb.cast(dtype::uint8, j % 8);
        return kb.binary(ast::op::cmpne, mask & bit, kb.constant(dtype::uint8, 0));
      };
      if (unsigned_q) {  // bytes throughout, the fifth bit set into the byte
        if (five)
          nib = nib | kb.where(byte_bits ? fifth_byte_set() : fifth_set(), kb.constant(dtype::uint8, 16), kb.constant(dtype::uint8, 0));
        if (min) return {kb.cast(dtype::int32, nib), d, m()};
        return {kb.cast(dtype::int32, nib), d, {}, {}, {}, kb.constant(dtype::uint8, five ? 16 : 8)};
      }
      auto q = kb.cast(dtype::int16, nib);
      if (five) q = q | kb.where(fifth_set(), kb.constant(dtype::int16, 16), kb.constant(dtype::int16, 0));
      if (min) return {kb.cast(dtype::int32, q), d, m()};
      return {kb.cast(dtype::int32, q - kb.constant(dtype::int16, five ? 16 : 8)), d, {}};
    }
    case tensor_type::q4_k: case tensor_type::q5_k: {
      const std::int64_t bytes = type == tensor_type::q4_k ? 144 : 176, qs_at = type == tensor_type::q4_k ? 16 : 48;
      auto base = row * row_bytes + blk * bytes;
      auto d = f16(kb, slot, row * half_row + blk * (bytes / 2));
      auto dmin = f16(kb, slot, row * half_row + blk * (bytes / 2) + 1);
      auto sub_const = kb.constant_index(sub);
      auto [sc, mn] = sub_const ? k_scale_min_words(kb, slot, row * (row_bytes / 4) + blk * (bytes / 4) + 1, *sub_const) : k_scale_min(kb, slot, base + 4, sub);
      if (unsigned_q) {  // bytes throughout
        auto q = (byte(base + qs_at + (sub / 2) * 32 + j) >> bits((sub % 2) * 4)) & 15;
        if (type == tensor_type::q5_k) q = q | (((byte(base + 16 + j) >> bits(sub)) & 1) << 4);
        return {kb.cast(dtype::int32, q), sc, mn, d, dmin};
      }
      auto q = (wide(byte(base + qs_at + (sub / 2) * 32 + j)) >> wide((sub % 2) * 4)) & 15;
      if (type == tensor_type::q5_k) q = q | (((wide(byte(base + 16 + j)) >> wide(sub)) & 1) << 4);
      return {kb.cast(dtype::int32, q), sc, mn, d, dmin};
    }
    case tensor_type::q6_k: {
      auto base = row * row_bytes + blk * 210;
      auto half = sub / 4, quarter = sub % 4;
      auto low = (byte(base + half * 64 + (quarter % 2) * 32 + j) >> bits((quarter / 2) * 4)) & 15;
      auto high = (byte(base + 128 + half * 32 + j) >> bits(quarter * 2)) & 3;
      auto d = f16(kb, slot, row * half_row + blk * 105 + 104);
      auto sc_at = base + 192 + sub * 2;
      auto i8 = [&](kvalue at) { return kb.cast(dtype::int32, kb.load<std::int8_t>(slot, at)); };
      auto sc = kb.where(j_pair < kb.index(16), i8(sc_at), i8(sc_at + 1));
      if (unsigned_q) return {kb.cast(dtype::int32, low | (high << 4)), sc, {}, d, {}, kb.constant(dtype::uint8, 32)};
      // q - 32 fits an int8: subtracted on the bytes, before the widening (two fields and
      // an offset on 32 bytes at once beat widening first here: llvm-mca 55 against 61).
      return {kb.cast(dtype::int32, kb.cast(dtype::int8, low | (high << 4)) - 32), sc, {}, d, {}};
    }
    default:
      throw usage_error(str("int_form: tensor type ", gguf::tensor_type_name(type), " has no integer form"));
  }
}

kvalue k_int_min(kernel_builder& kb, int slot, tensor_type type, std::int64_t row_bytes, kvalue row, kvalue blk,
                 kvalue sub) {
  if (type != tensor_type::q4_k && type != tensor_type::q5_k)
    throw usage_error(str("k_int_min: tensor type ", gguf::tensor_type_name(type), " is not Q4_K or Q5_K"));
  const std::int64_t bytes = type == tensor_type::q4_k ? 144 : 176;
  return kb.cast(dtype::int32, k_scale_min(kb, slot, row * row_bytes + blk * bytes + 4, sub).min);
}

// Q4_K/Q5_K: the two sub-blocks of a pair share their 32 bytes of nibbles, so one 32-byte load
// serves both: the low nibbles are sub-block 2 * pair, the high ones 2 * pair + 1 (ggml-quants.c,
// dequantize_row_q4_K: `q[l] & 0xF` then `q[l] >> 4`). Per lane a select of the two, as bytes.
// Q6_K: the pair's low 4 bits are 64 neighbouring bytes (the same nibble of both), their high
// 2 bits the same 32 bytes shifted by 2 more for the second (dequantize_row_q6_K: ql[l] and
// ql[l + 32], qh[l] >> 0 and >> 2 for quarters 0 and 1), and each 16 values have a scale: four
// per pair, one 4-byte load spread over the lanes.
int_weight_pair k_int_form_pair(kernel_builder& kb, int slot, tensor_type type, std::int64_t row_bytes, kvalue row,
                                kvalue blk, std::int64_t pair, kvalue j64, kvalue j64_pair) {
  auto bits = [&](std::int64_t count) { return kb.cast(dtype::uint8, kb.index(count)); };
  auto byte = [&](kvalue at) { return kb.load<std::uint8_t>(slot, at); };
  const std::int64_t half_row = row_bytes / 2;
  auto first = j64_pair < kb.index(32);  // the pair's first sub-block
  auto j = j64 % 32;
  int_weight_pair w;
  if (type == tensor_type::q6_k) {
    auto base = row * row_bytes + blk * 210;
    // quarters 0-1 of a 128-value half (pair % 2 == 0) take the low nibbles and qh bits 0 and 2,
    // quarters 2-3 the high nibbles and qh bits 4 and 6: one shift for both
    const std::int64_t half = pair / 2, shift = (pair % 2) * 4;
    auto low = (byte(base + half * 64 + j64) >> bits(shift)) & 15;
    auto packed_high = byte(base + 128 + half * 32 + j);
    auto high = kb.where(first, (packed_high >> bits(shift)) & 3, (packed_high >> bits(shift + 2)) & 3);
    w.q = kb.cast(dtype::int32, low | (high << 4));
    w.a = kb.cast(dtype::int32, kb.load<std::int8_t>(slot, base + 192 + pair * 4 + j64_pair / 16));
    w.block_a = f16(kb, slot, row * half_row + blk * 105 + 104);
    w.zero = kb.constant(dtype::uint8, 32);
    return w;
  }
  if (type != tensor_type::q4_k && type != tensor_type::q5_k)
    throw usage_error(str("k_int_form_pair: tensor type ", gguf::tensor_type_name(type), " is not a K-quant"));
  const std::int64_t bytes = type == tensor_type::q4_k ? 144 : 176, qs_at = type == tensor_type::q4_k ? 16 : 48;
  auto base = row * row_bytes + blk * bytes;
  auto packed = byte(base + qs_at + pair * 32 + j);
  auto q = kb.where(first, packed & 15, packed >> bits(4));
  if (type == tensor_type::q5_k) {  // the fifth bits: bit `sub` of byte j of the 32 at offset 16
    auto high = byte(base + 16 + j);
    auto bit = kb.where(first, (high >> bits(2 * pair)) & 1, (high >> bits(2 * pair + 1)) & 1);
    q = q | (bit << 4);
  }
  w.q = kb.cast(dtype::int32, q);
  const auto word0 = row * (row_bytes / 4) + blk * (bytes / 4) + 1;
  auto low_sub = k_scale_min_words(kb, slot, word0, 2 * pair), high_sub = k_scale_min_words(kb, slot, word0, 2 * pair + 1);
  w.a = kb.where(first, low_sub.scale, high_sub.scale);
  w.block_a = f16(kb, slot, row * half_row + blk * (bytes / 2));
  w.block_b = f16(kb, slot, row * half_row + blk * (bytes / 2) + 1);
  return w;
}

kvalue dequant(kernel_builder& kb, int slot, tensor_type type, std::int64_t row_bytes, kvalue row, kvalue g, kvalue j) {
  const auto& traits = gguf::traits_of(type);
  const std::int64_t cols = row_bytes / traits.block_bytes * traits.block_elems, gs = group_size(type, cols);
  if (traits.block_elems == 1 || gs == 32) return dequant32(kb, slot, type, row_bytes, row, g, j);
  return dequant32(kb, slot, type, row_bytes, row, g * (gs / 32) + j / 32, j % 32);
}

}  // namespace tg::model
