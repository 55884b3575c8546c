// int8_matmul_test.cpp: the 8-bit activation rounding kernels and the integer-dot matmuls
// (Q8_0, Q4_0/1, Q5_0/1, Q4_K, Q5_K, Q6_K; decode and prefill loop shapes, with and without epilogues),
// and the tiled prefill matmuls (the same types; matmul_tiles.hpp) at the CPU level in force,
// against scalar references (activation_kernels.hpp's rule, gguf's reference decoder) on
// random inputs.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "llm/gguf/dequant_reference.hpp"
#include "llm/gguf/tensor_type.hpp"
#include "llm/model/activation_kernels.hpp"
#include "llm/model/launch_vars.hpp"
#include "llm/model/linear_kernels.hpp"
#include "llm/model/matmul_tiles.hpp"
#include "drivers/cpu/cpu_target.hpp"

namespace {

using tg::model::launch_values;

tg::device& cpu() {
  static tg::device d("CPU");
  return d;
}

template <class T>
tg::buffer upload(const std::vector<T>& v) {
  tg::buffer b = cpu().allocate(v.size() * sizeof(T));
  b.copy_in(v.data(), v.size() * sizeof(T));
  return b;
}
template <class T>
std::vector<T> download(const tg::buffer& b, std::size_t n) {
  std::vector<T> v(n);
  b.copy_out(v.data(), n * sizeof(T));
  return v;
}

// The scalar reference: per block s = max|x| / 127, q = x / s rounded half away from 0.
struct rounded {
  std::vector<float> scales;
  std::vector<int> values;
};
rounded round_reference(const std::vector<float>& x, std::int64_t rows, std::int64_t K, std::int64_t first,
                        std::int64_t block) {
  rounded r;
  for (std::int64_t t = 0; t < rows; ++t)
    for (std::int64_t b = 0; b < K / block; ++b) {
      const float* v = &x[std::size_t((t + first) * K + b * block)];
      float amax = 0;
      for (std::int64_t j = 0; j < block; ++j) amax = std::fmax(amax, std::fabs(v[j]));
      const float s = amax * float(1.0 / 127.0), inv = s > 0 ? 1.0f / s : 0.0f;
      r.scales.push_back(s);
      for (std::int64_t j = 0; j < block; ++j) r.values.push_back(int(std::lround(v[j] * inv)));
    }
  return r;
}

std::vector<float> random_floats(std::size_t n, std::mt19937& rng, float scale) {
  std::normal_distribution<float> d(0.0f, scale);
  std::vector<float> v(n);
  for (float& f : v) f = d(rng);
  return v;
}

// Rounds rows [first, first + rows) of x with the kernels in blocks of `block`; returns xq
// (int16) and xs buffers.
std::pair<tg::buffer, tg::buffer> round_on_device(const tg::buffer& x, std::int64_t K, tg::model::launch_var rows, int first,
                                                  const launch_values& vars, std::int64_t block) {
  tg::buffer xs = cpu().allocate(std::size_t(vars[std::size_t(rows)] * K / block) * 4);
  tg::buffer xq = cpu().allocate(std::size_t(vars[std::size_t(rows)] * K) * 2);
  cpu().launch(tg::model::activation_scale_kernel(K, rows, first, block), std::vector<tg::buffer>{xs, x}, vars);
  cpu().launch(tg::model::activation_quant_kernel(K, rows, first, block), std::vector<tg::buffer>{xq, x, xs}, vars);
  return {xq, xs};
}

// The per-32 sums of xq (activation_sum_kernel): s * sum as float for 32-value blocks, the
// integer sum for 256-value blocks.
tg::buffer sums_on_device(const tg::buffer& xq, const tg::buffer& xs, std::int64_t K, std::int64_t rows,
                          tg::model::launch_var rows_var, const launch_values& vars, std::int64_t block) {
  tg::buffer xsum = cpu().allocate(std::size_t(rows * K / 32) * 4);
  auto kernel = tg::model::activation_sum_kernel(K, rows_var, block);
  std::vector<tg::buffer> slots{xsum, xq, xs};
  slots.resize(std::size_t(kernel.slot_count));
  cpu().launch(kernel, slots, vars);
  return xsum;
}

TEST_CASE("activation rounding kernels match the scalar reference, in blocks of 32 and of 256") {
  std::mt19937 rng(5);
  const std::int64_t K = 512, total_rows = 7;
  auto x = random_floats(std::size_t(total_rows * K), rng, 3.0f);
  for (int j = 0; j < 256; ++j) x[std::size_t(2 * K + 256 + j)] = 0.0f;  // an all-zero block: scale 0, values 0
  tg::buffer xb = upload(x);
  for (std::int64_t block : {std::int64_t(32), std::int64_t(256)}) {
    CAPTURE(block);
    // Rows 2..6 through the head's variables (rows, first), as the output head rounds them.
    launch_values vars{total_rows, 0, 5, 2};
    auto [xq, xs] = round_on_device(xb, K, tg::model::var_head_rows, tg::model::var_head_first, vars, block);
    auto want = round_reference(x, 5, K, 2, block);
    auto scales = download<float>(xs, want.scales.size());
    auto values = download<std::int16_t>(xq, want.values.size());
    for (std::size_t i = 0; i < scales.size(); ++i) CHECK(scales[i] == doctest::Approx(want.scales[i]).epsilon(1e-6));
    CHECK(scales[std::size_t(256 / block)] == 0.0f);  // x row 2 (rounded row 0): its second 256 values are zero
    int off_by_one = 0;
    for (std::size_t i = 0; i < values.size(); ++i) {
      CHECK(std::abs(values[i]) <= 127);
      // A product rounded once (fused) or twice may land on the other side of .5.
      CHECK(std::abs(int(values[i]) - want.values[i]) <= 1);
      off_by_one += int(values[i]) != want.values[i];
    }
    CHECK(off_by_one <= int(values.size()) / 100);
    // The sums of what the device rounded, per 32 values.
    tg::buffer xsum = sums_on_device(xq, xs, K, 5, tg::model::var_head_rows, vars, block);
    const std::size_t groups = values.size() / 32;
    auto float_sums = download<float>(xsum, groups);
    auto int_sums = download<std::int32_t>(xsum, groups);
    for (std::size_t g = 0; g < groups; ++g) {
      int sum = 0;
      for (std::size_t j = 0; j < 32; ++j) sum += values[g * 32 + j];
      if (block == 32) CHECK(float_sums[g] == doctest::Approx(double(sum) * scales[g]).epsilon(1e-6));
      else CHECK(int_sums[g] == sum);
    }
    // 256-value blocks: the per-8 sums times 32 as int16 (Q6_K's decode tiles), from the int16 values and their int8 copy.
    if (block == 256) {
      tg::buffer bytes = cpu().allocate(values.size());
      cpu().launch(tg::model::activation_byte_kernel(K, tg::model::var_head_rows), std::vector<tg::buffer>{bytes, xq}, vars);
      for (bool from_bytes : {false, true}) {
        tg::buffer xsum8 = cpu().allocate(values.size() / 8 * 2);
        cpu().launch(tg::model::activation_sum8_kernel(K, tg::model::var_head_rows, from_bytes),
                     std::vector<tg::buffer>{xsum8, from_bytes ? bytes : xq}, vars);
        auto sums8 = download<std::int16_t>(xsum8, values.size() / 8);
        for (std::size_t h = 0; h < sums8.size(); ++h) {
          int sum = 0;
          for (std::size_t j = 0; j < 8; ++j) sum += values[h * 8 + j];
          CHECK(int(sums8[h]) == 32 * sum);
        }
      }
    }
  }
}

TEST_CASE("activation kernels refuse a block that is not 32 or 256 or does not divide the row") {
  CHECK_THROWS_WITH_AS(tg::model::activation_scale_kernel(512, tg::model::var_tokens, -1, 64),
                       "activation kernels: blocks of 64 values over rows of 512 (blocks are 32 or 256 values and must divide the row)",
                       tg::usage_error);
  CHECK_THROWS_WITH_AS(tg::model::activation_quant_kernel(288, tg::model::var_tokens, -1, 256),
                       "activation kernels: blocks of 256 values over rows of 288 (blocks are 32 or 256 values and must divide the row)",
                       tg::usage_error);
}

// Random blocks of `type`: random bytes, with every fp16 field set to a modest scale (random
// bits could be inf or NaN).
std::vector<std::uint8_t> random_rows(tg::gguf::tensor_type type, std::int64_t rows, std::int64_t K, std::mt19937& rng) {
  const auto& traits = tg::gguf::traits_of(type);
  const std::size_t block = std::size_t(traits.block_bytes);
  std::vector<std::uint8_t> bytes(std::size_t(rows * K / traits.block_elems) * block);
  std::uniform_int_distribution<int> any(0, 255);
  std::uniform_real_distribution<float> scale(0.001f, 0.05f);
  for (auto& b : bytes) b = std::uint8_t(any(rng));
  std::vector<std::size_t> halves;  // byte offsets of the fp16 fields in a block
  switch (type) {
    case tg::gguf::tensor_type::q8_0: case tg::gguf::tensor_type::q4_0: case tg::gguf::tensor_type::q5_0:
      halves = {0};
      break;
    case tg::gguf::tensor_type::q4_1: case tg::gguf::tensor_type::q5_1:
    case tg::gguf::tensor_type::q4_k: case tg::gguf::tensor_type::q5_k:
      halves = {0, 2};
      break;
    case tg::gguf::tensor_type::q6_k: halves = {208}; break;
    default: FAIL("no fp16 layout for this type in the test");
  }
  for (std::size_t b = 0; b < bytes.size(); b += block)
    for (std::size_t at : halves) {
      const std::uint16_t d = tg::half(scale(rng)).bits;
      std::memcpy(&bytes[b + at], &d, 2);
    }
  return bytes;
}

// The largest error of out against the reference decoder's weights deq times what the
// device rounded (xq, xs), in double, relative to the sum of the products' sizes.
double worst_error(const tg::buffer& out, const tg::buffer& xq, const tg::buffer& xs, const std::vector<float>& deq,
                   const std::vector<float>& bias, const std::vector<float>& residual, bool epilogues, std::int64_t T,
                   std::int64_t N, std::int64_t K, std::int64_t block) {
  auto got = download<float>(out, std::size_t(T * N));
  auto qs = download<std::int16_t>(xq, std::size_t(T * K));
  auto ss = download<float>(xs, std::size_t(T * K / block));
  double worst = 0;
  for (std::int64_t t = 0; t < T; ++t)
    for (std::int64_t n = 0; n < N; ++n) {
      double sum = epilogues ? double(bias[std::size_t(n)]) + residual[std::size_t(t * N + n)] : 0.0, size = 0;
      for (std::int64_t k = 0; k < K; ++k) {
        double p = double(deq[std::size_t(n * K + k)]) * ss[std::size_t((t * K + k) / block)] * qs[std::size_t(t * K + k)];
        sum += p;
        size += std::fabs(p);
      }
      worst = std::fmax(worst, std::fabs(got[std::size_t(t * N + n)] - sum) / (1.0 + size));
    }
  return worst;
}

// The level the CPU device runs at (TG_CPU_FEATURES, as meson's model_tiles_<level> tests set
// it), or "" when this CPU cannot run it: the test says so and checks nothing.
std::string level_in_force() {
  const char* env = std::getenv("TG_CPU_FEATURES");
  const std::string level = env != nullptr && *env != '\0' ? env : "native";
  const auto levels = tg::cpu::host_levels();
  if (std::find(levels.begin(), levels.end(), level) != levels.end()) return level;
  std::string can;
  for (const auto& l : levels) can += " " + l;
  MESSAGE("skipped level " << level << ": this CPU runs" << can);
  return "";
}

TEST_CASE("integer-dot matmuls match a scalar reference in every loop shape, for every type with an int form") {
  using tg::gguf::tensor_type;
  if (level_in_force().empty()) return;  // e.g. model_int8_avx512vnni on a Zen 3
  std::mt19937 rng(9);
  const std::int64_t N = 24;
  // K = 4352 (over 4096): the prefill tile of 2 rows x 2 tokens for 32-value types.
  for (std::int64_t K : {std::int64_t(512), std::int64_t(4352)})
  for (auto type : {tensor_type::q8_0, tensor_type::q4_0, tensor_type::q4_1, tensor_type::q5_0, tensor_type::q5_1,
                    tensor_type::q4_k, tensor_type::q5_k, tensor_type::q6_k}) {
    CAPTURE(K);
    CAPTURE(tg::gguf::tensor_type_name(type));
    const auto& traits = tg::gguf::traits_of(type);
    const std::int64_t row_bytes = K / traits.block_elems * traits.block_bytes;
    auto wbytes = random_rows(type, N, K, rng);
    tg::model::weight w{"w", type, N, K, row_bytes, upload(wbytes)};
    REQUIRE(tg::model::uses_int8_activations(w));
    const std::int64_t block = tg::model::activation_block_for(w);
    CHECK(block == (traits.block_elems == 256 ? 256 : 32));
    std::vector<float> deq(std::size_t(N * K));  // the weights by the scalar reference decoder
    for (std::int64_t n = 0; n < N; ++n)
      tg::gguf::dequantize_row(type, reinterpret_cast<const std::byte*>(&wbytes[std::size_t(n * row_bytes)]),
                               &deq[std::size_t(n * K)], std::size_t(K));
    auto bias = random_floats(std::size_t(N), rng, 1.0f);
    tg::buffer bias_b = upload(bias);
    for (std::int64_t T : {1, 3, 8, 16}) {
      for (bool epilogues : {false, true}) {
        CAPTURE(T);
        CAPTURE(epilogues);
        auto x = random_floats(std::size_t(T * K), rng, 1.0f);
        auto residual = random_floats(std::size_t(T * N), rng, 1.0f);
        tg::buffer xb = upload(x), rb = upload(residual), out = cpu().allocate(std::size_t(T * N) * 4);
        launch_values vars{T, 0, 0, 0};
        auto [xq, xs] = round_on_device(xb, K, tg::model::var_tokens, -1, vars, block);
        tg::buffer xsum = sums_on_device(xq, xs, K, T, tg::model::var_tokens, vars, block);
        const tg::model::matmul_epilogue e{.bias = epilogues, .residual = epilogues};
        const bool prefill = T % tg::model::prefill_token_lanes == 0;
        auto kernel = prefill ? tg::model::matmul_prefill_kernel(w, e) : tg::model::matmul_kernel(w, tg::model::var_tokens, -1, e);
        // Decode streams its weights with prefetches ahead of the reads (the last rows ask for
        // bytes past the buffer, which must not fault); prefill's tiles are compute-bound.
        const auto prefetches = std::count_if(kernel.nodes.begin(), kernel.nodes.end(),
                                              [](const tg::ast::node& n) { return n.o == tg::ast::op::prefetch; });
        CHECK((prefetches > 0) == !prefill);
        if (prefill) CHECK(kernel.upcast[0] == (K > 4096 && traits.block_elems == 32 ? 2 : 1));  // rows per step
        // A kernel that reads the activations as bytes (the VNNI quads) takes their int8 copy.
        tg::buffer x8 = cpu().allocate(std::size_t(T * K));
        cpu().launch(tg::model::activation_byte_kernel(K, tg::model::var_tokens), std::vector<tg::buffer>{x8, xq}, vars);
        auto run = [&](const tg::ast::kernel& k) {
          std::vector<tg::buffer> slots{out, w.data, tg::model::reads_activation_bytes(k) ? x8 : xq, rb, bias_b, xs, xsum};
          slots.resize(std::size_t(k.slot_count));
          cpu().launch(k, slots, vars);
        };
        run(kernel);
        const double worst = worst_error(out, xq, xs, deq, bias, residual, epilogues, T, N, K, block);
        CHECK(worst <= 1e-5);
        if (!prefill) {  // decode's shape for 512-bit vectors (Q4_K in 16 lanes; with VNNI, quads
                         // for every type but Q8_0), on whatever this CPU has
          const auto wide = tg::model::matmul_kernel(w, tg::model::var_tokens, -1, e, tg::model::matmul_form::wide);
          const bool quad_type = type == tensor_type::q4_0 || type == tensor_type::q4_1 || type == tensor_type::q5_0 ||
                                 type == tensor_type::q5_1 || type == tensor_type::q4_k || type == tensor_type::q5_k ||
                                 type == tensor_type::q6_k;
          CHECK(tg::model::reads_activation_bytes(wide) == (quad_type && tg::cpu::host_cpu_target().vnni));
          // AVX2 without VNNI: the default decode takes the same quads (pmaddubsw + pmaddwd).
          const tg::cpu::cpu_target& host = tg::cpu::host_cpu_target();
          if (!host.vnni && host.vector_bits == 256) CHECK(tg::model::reads_activation_bytes(kernel) == quad_type);
          run(wide);
          CHECK(worst_error(out, xq, xs, deq, bias, residual, epilogues, T, N, K, block) <= 1e-5);
        }
      }
    }
  }
}

TEST_CASE("tiled prefill matmuls match a scalar reference at the CPU level in force, in every tile height") {
  using tg::gguf::tensor_type;
  const std::string level = level_in_force();
  if (level.empty()) return;
  MESSAGE("level " << tg::cpu::host_cpu_target().describe());
  std::mt19937 rng(11);
  const std::int64_t N = 64;
  for (std::int64_t K : {std::int64_t(512), std::int64_t(4352)})
  for (auto type : {tensor_type::q8_0, tensor_type::q4_0, tensor_type::q4_1, tensor_type::q5_0, tensor_type::q5_1,
                    tensor_type::q4_k, tensor_type::q5_k, tensor_type::q6_k})
  for (std::int64_t rows : {std::int64_t(8), std::int64_t(16), std::int64_t(32)})
  for (bool quads : {false, true}) {  // quads are vpdpbusd where the level has VNNI, generic code elsewhere
    if (quads && type == tensor_type::q6_k) continue;  // int16 pairs only
    CAPTURE(K);
    CAPTURE(tg::gguf::tensor_type_name(type));
    CAPTURE(rows);
    CAPTURE(quads);
    const auto& traits = tg::gguf::traits_of(type);
    const std::int64_t row_bytes = K / traits.block_elems * traits.block_bytes;
    auto wbytes = random_rows(type, N, K, rng);
    tg::model::weight w{"w", type, N, K, row_bytes, upload(wbytes)};
    REQUIRE(tg::model::has_tiles(w));
    tg::model::add_tiles(cpu(), w, rows, quads);
    CHECK(w.tile_quads == quads);
    CHECK(tg::model::reads_activation_bytes(w) == quads);
    // The per-32 sums: types with an offset, and as quads the symmetric ones (a zero point).
    const bool symmetric = type == tensor_type::q8_0 || type == tensor_type::q4_0 || type == tensor_type::q5_0;
    CHECK(tg::model::tiles_take_sums(w) == (tg::model::uses_activation_sums(w) || (quads && symmetric)));
    const std::int64_t block = tg::model::activation_block_for(w);
    std::vector<float> deq(std::size_t(N * K));
    for (std::int64_t n = 0; n < N; ++n)
      tg::gguf::dequantize_row(type, reinterpret_cast<const std::byte*>(&wbytes[std::size_t(n * row_bytes)]),
                               &deq[std::size_t(n * K)], std::size_t(K));
    auto bias = random_floats(std::size_t(N), rng, 1.0f);
    tg::buffer bias_b = upload(bias);
    for (std::int64_t T : {4, 12}) {
      for (bool epilogues : {false, true}) {
        CAPTURE(T);
        CAPTURE(epilogues);
        auto x = random_floats(std::size_t(T * K), rng, 1.0f);
        auto residual = random_floats(std::size_t(T * N), rng, 1.0f);
        tg::buffer xb = upload(x), rb = upload(residual), out = cpu().allocate(std::size_t(T * N) * 4);
        launch_values vars{T, 0, 0, 0};
        auto [xq, xs] = round_on_device(xb, K, tg::model::var_tokens, -1, vars, block);
        tg::buffer xsum = sums_on_device(xq, xs, K, T, tg::model::var_tokens, vars, block);
        tg::buffer xbytes = cpu().allocate(std::size_t(T * K));  // the values as bytes, for quads
        cpu().launch(tg::model::activation_byte_kernel(K, tg::model::var_tokens), std::vector<tg::buffer>{xbytes, xq}, vars);
        const tg::model::matmul_epilogue e{.bias = epilogues, .residual = epilogues};
        auto kernel = tg::model::matmul_prefill_kernel(w, e);
        REQUIRE(kernel.slot_count == 8);  // the tiles' slot
        CHECK(kernel.upcast.back() == rows);  // the tile's rows are the vector
        // Pairs on one vector of rows take two tiles a step (register tile 2 x 4 x 8), 8 tiles here.
        CHECK(kernel.upcast.size() == (rows == 8 && !quads ? 4u : 3u));
        // The level's default tiles: quads as vpdpbusd with AVX-512 VNNI; without VNNI as
        // vpmaddubsw + vpmaddwd for every type but Q8_0 (its q + 128 could saturate them), the
        // loaded bytes masked so that LLVM can prove them below 128.
        const tg::cpu::cpu_target& host = tg::cpu::host_cpu_target();
        if (quads == tg::model::tile_quads_for(cpu(), type) && T == 4 && !epilogues) {
          const std::string form = cpu().prepare(kernel).describe();
          CAPTURE(form);
          if (!quads) CHECK(form.find(host.vnni ? "int8 dot vpdpwssd" : "int8 dot vpmaddwd+vpaddd") != std::string::npos);
          else if (host.vnni) CHECK(form.find("int8 dot vpdpbusd") != std::string::npos);
          else CHECK(form.find("int8 dot vpmaddubsw+vpmaddwd") != std::string::npos);
        }
        if (!host.vnni) CHECK(tg::model::tile_quads_for(cpu(), type) == (type != tensor_type::q8_0 && type != tensor_type::q6_k));
        std::vector<tg::buffer> slots{out, w.data, quads ? xbytes : xq, rb, bias_b, xs, xsum, w.tiles};
        cpu().launch(kernel, slots, vars);
        CHECK(worst_error(out, xq, xs, deq, bias, residual, epilogues, T, N, K, block) <= 1e-5);
        // Q5 as quads and Q6_K: decode's own tiles (the file's bits; Q5_K's with its scales as bytes,
        // 180 per 256 values, not 176), four token lanes and one, from slot 8; Q6_K's take the per-8
        // sums (slot 9) for its zero point.
        const bool five = type == tensor_type::q5_0 || type == tensor_type::q5_1 || type == tensor_type::q5_k;
        CHECK(bool(w.decode_tiles.data()) == ((quads && five) || type == tensor_type::q6_k));
        if (w.decode_tiles.data()) {
          CHECK(w.decode_tiles.size_bytes() == std::size_t(type == tensor_type::q5_k ? N * (K / 256) * 180 : N * row_bytes));
          tg::buffer out4 = cpu().allocate(std::size_t(T * N) * 4), out1 = cpu().allocate(std::size_t(T * N) * 4);
          tg::buffer xsum8 = cpu().allocate(std::size_t(T * K / 8) * 2);
          cpu().launch(tg::model::activation_sum8_kernel(K, tg::model::var_tokens), std::vector<tg::buffer>{xsum8, xq}, vars);
          std::vector<tg::buffer> decode_slots{out4, w.data, xbytes, rb, bias_b, xs, xsum, w.data, w.decode_tiles, xsum8};
          const auto lanes4 = tg::model::tiled_matmul_kernel(w, e, 4, tg::model::var_tokens, true);
          const auto lane1 = tg::model::tiled_matmul_kernel(w, e, 1, tg::model::var_tokens, true);
          REQUIRE(lanes4.slot_count == (type == tensor_type::q6_k ? 10 : 9));
          CHECK(tg::model::reads_activation_sums8(lane1) == (type == tensor_type::q6_k));
          decode_slots.resize(std::size_t(lanes4.slot_count));
          const bool super_block = type == tensor_type::q6_k || type == tensor_type::q5_k;
          if (super_block && T == 4 && !epilogues) {  // quad dots, as the Q4 tiles take them
            const std::string form = cpu().prepare(lane1).describe();
            CAPTURE(form);
            CHECK(form.find(host.vnni ? "int8 dot vpdpbusd" : "int8 dot vpmaddubsw+vpmaddwd") != std::string::npos);
          }
          cpu().launch(lanes4, decode_slots, vars);
          CHECK(worst_error(out4, xq, xs, deq, bias, residual, epilogues, T, N, K, block) <= 1e-5);
          decode_slots[0] = out1;
          cpu().launch(lane1, decode_slots, vars);
          std::vector<float> a(std::size_t(T * N)), b(a.size());
          out4.copy_out(a.data(), a.size() * 4);
          out1.copy_out(b.data(), b.size() * 4);
          CHECK(std::memcmp(a.data(), b.data(), a.size() * 4) == 0);
          CHECK(tg::model::matmul_kernel(w, tg::model::var_tokens, -1, e).nodes == lane1.nodes);
          CHECK(tg::model::matmul_batch_kernel(w, e).nodes == lanes4.nodes);
        }
        // One token lane computes every row bit for bit as four lanes do (a decode batch's
        // rows equal each sequence's own decode); it is decode's kernel where the tiles take
        // the file's bytes (Q8_0; as quads the Q4 and Q5 types), and prefetches its stream.
        const auto one_lane = tg::model::tiled_matmul_kernel(w, e, 1);
        CHECK(one_lane.upcast[1] == 1);
        tg::buffer out1 = cpu().allocate(std::size_t(T * N) * 4);
        slots[0] = out1;
        cpu().launch(one_lane, slots, vars);
        std::vector<float> four_lanes(std::size_t(T * N)), lone(four_lanes.size());
        out.copy_out(four_lanes.data(), four_lanes.size() * 4);
        out1.copy_out(lone.data(), lone.size() * 4);
        CHECK(std::memcmp(four_lanes.data(), lone.data(), lone.size() * 4) == 0);
        const bool nibble_type = type == tensor_type::q4_0 || type == tensor_type::q4_1 || type == tensor_type::q5_0 ||
                                 type == tensor_type::q5_1 || type == tensor_type::q4_k;  // as quads: the file's nibbles (and fifth bits)
        // Q4_K as quads: whole super-blocks, the file's nibbles with its scales as bytes (148 per 256 values, not 144).
        if (quads && type == tensor_type::q4_k) CHECK(w.tiles.size_bytes() == std::size_t(N * (K / 256) * 148));
        CHECK(tg::model::decodes_from_tiles(w) ==
              (type == tensor_type::q8_0 || type == tensor_type::q6_k || (quads && (nibble_type || type == tensor_type::q5_k))));
        if (tg::model::decodes_from_tiles(w) && !w.decode_tiles.data()) {
          CHECK(tg::model::matmul_kernel(w, tg::model::var_tokens, -1, e).nodes == one_lane.nodes);
          CHECK(tg::model::matmul_batch_kernel(w, e).nodes == kernel.nodes);
        }
      }
    }
  }
}

TEST_CASE("the CPU levels: the host runs native and every level it lists, and refuses a made-up one") {
  const auto levels = tg::cpu::host_levels();
  REQUIRE(!levels.empty());
  CHECK(levels.back() == "native");
  for (const auto& l : levels) {
    const auto t = tg::cpu::detect_cpu_target(l);
    CHECK(t.level == l);
    CHECK(t.vector_bits >= 128);
    if (l == "avx2") CHECK(std::find(t.features.begin(), t.features.end(), "+avx512f") == t.features.end());
    if (l == "avx512") CHECK(!t.vnni);
    if (l == "avx512vnni") CHECK(t.vnni);
    // Software prefetch follows the microarchitecture (off on Zen 4 and Zen 5), whatever the level.
    if (std::getenv("TG_CPU_PREFETCH") == nullptr) CHECK(t.software_prefetch == (t.cpu != "znver4" && t.cpu != "znver5"));
    CHECK(t.isa().prefetch == t.software_prefetch);
  }
  // TG_CPU_PREFETCH overrides it either way, and names a bad value.
  const char* before = std::getenv("TG_CPU_PREFETCH");
  const std::string kept = before ? before : "";
  setenv("TG_CPU_PREFETCH", "on", 1);
  CHECK(tg::cpu::detect_cpu_target("native").software_prefetch);
  setenv("TG_CPU_PREFETCH", "off", 1);
  CHECK_FALSE(tg::cpu::detect_cpu_target("native").software_prefetch);
  setenv("TG_CPU_PREFETCH", "sometimes", 1);
  CHECK_THROWS_WITH_AS(tg::cpu::detect_cpu_target("native"), "TG_CPU_PREFETCH=sometimes: give on or off", tg::usage_error);
  if (before) setenv("TG_CPU_PREFETCH", kept.c_str(), 1); else unsetenv("TG_CPU_PREFETCH");
  CHECK_THROWS_WITH_AS(tg::cpu::detect_cpu_target("sse9"),
                       "TG_CPU_FEATURES=sse9: not a level (avx2, avx512, avx512vnni or native)", tg::usage_error);
}

}  // namespace
