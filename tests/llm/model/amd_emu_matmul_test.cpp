// amd_emu_matmul_test.cpp: the LLM's decode matmuls (linear_kernels.hpp: matmul_kernel with its
// activation rounding) at a K where the GPU heuristic gives each row a group of work-items
// (runtime/opt/gpu_heuristic.hpp: the lane-hinted dot becomes the group's threads, the block
// loop unrolled), for every type with an integer form and for F32/F16, on the emulated gfx11
// and gfx12 against the CPU device (the GPUs take the GPU form: quads summed by v_dot4_i32_iu8
// over int8 activations; that form runs on the CPU too). The fixtures' forward test (amd_emu_forward_test.cpp) has
// rows too short for the heuristic to split.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "llm/gguf/tensor_type.hpp"
#include "llm/model/linear_kernels.hpp"
#include "llm/synth/quantize.hpp"
#include "drivers/amd/am_backend.hpp"
#include "drivers/emu/emu_device.hpp"
#include "runtime/tune/candidate_runner.hpp"
#include "runtime/tune/gpu_candidates.hpp"
#include "runtime/tune/opts_text.hpp"
#include "tests/llm/model/decode_matvec.hpp"
#include <tg/device.hpp>

namespace {

using tg::gguf::tensor_type;
namespace model = tg::model;

std::vector<float> random_values(std::size_t n, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (float& x : v) x = u(rng);
  return v;
}

// N rows of K random values in [-1, 1), quantized to `type`.
std::vector<std::byte> random_rows(tensor_type type, std::int64_t N, std::int64_t K) {
  const std::size_t row_bytes = tg::gguf::row_size_bytes(type, std::size_t(K));
  std::vector<std::byte> bytes(row_bytes * std::size_t(N));
  for (std::int64_t r = 0; r < N; ++r) {
    const std::vector<float> row = random_values(std::size_t(K), std::uint32_t(100 + r));
    tg::synth::quantize_row(type, row.data(), &bytes[row_bytes * std::size_t(r)], std::size_t(K));
  }
  return bytes;
}

model::weight upload(tg::device& dev, tensor_type type, std::int64_t N, std::int64_t K, const std::vector<std::byte>& bytes) {
  const std::int64_t row_bytes = std::int64_t(tg::gguf::row_size_bytes(type, std::size_t(K)));
  model::weight w{"w", type, N, K, row_bytes, dev.allocate(bytes.size())};
  w.data.copy_in(bytes.data(), bytes.size());
  return w;
}

}  // namespace

TEST_CASE("the LLM's decode matmuls on the emulated GPU, split across work-items, match the CPU") {
  // 40 rows: groups in two waves and a part-filled third. K = 1024: each block loop's lanes
  // (kernel_opts::nested_lanes) take one K-quant super-block; K = 2816, 11 super-blocks (88
  // 32-value blocks): a ragged share per lane and several per unrolled trip.
  for (const std::int64_t K : {1024, 2816}) {
  CAPTURE(K);
  const std::int64_t N = 40;
  tg::device cpu("CPU");
  tg::device gfx11("AMD:EMU:gfx11"), gfx12("AMD:EMU:gfx12");
  const std::vector<float> x = random_values(std::size_t(K), 7);
  for (tensor_type type : {tensor_type::f32, tensor_type::f16, tensor_type::q8_0, tensor_type::q4_0, tensor_type::q5_1,
                           tensor_type::q4_k, tensor_type::q5_k, tensor_type::q6_k}) {
    CAPTURE(std::string(tg::gguf::tensor_type_name(type)));
    const std::vector<std::byte> bytes = random_rows(type, N, K);
    const std::vector<float> want = tg::test::decode_matvec(cpu, upload(cpu, type, N, K, bytes), x);
    // The GPU form (quads over int8 activations: model::matmul_form::gpu) on the CPU device too,
    // where no dot instruction stands in for its quad sums.
    const std::vector<float> cpu_quads = tg::test::decode_matvec(cpu, upload(cpu, type, N, K, bytes), x, model::matmul_form::gpu);
    for (const auto& [label, got] : {std::pair<const char*, std::vector<float>>{"CPU, GPU form", cpu_quads},
                                     {"AMD:EMU:gfx11", tg::test::decode_matvec(gfx11, upload(gfx11, type, N, K, bytes), x)},
                                     {"AMD:EMU:gfx12", tg::test::decode_matvec(gfx12, upload(gfx12, type, N, K, bytes), x)}}) {
      CAPTURE(label);
      double scale = 0, worst = 0;
      for (std::size_t i = 0; i < want.size(); ++i) {
        scale = std::max(scale, double(std::fabs(want[i])));
        worst = std::max(worst, double(std::fabs(got[i] - want[i])));
      }
      // The same integer dots; the float sums are reassociated across the group.
      CHECK(worst <= 1e-4 * scale);
    }
  }
  }
}

TEST_CASE("a GPU's decode matmul of a K-quant sums its activations itself; its prefill kernels and the CPU's read "
          "them") {
  // So a decode step launches no activation sum kernel on a GPU (transformer_layer.cpp asks
  // reads_activation_sums, once per kernel, of the kernel it picks). The test above checks its
  // results.
  tg::device cpu("CPU");
  for (tensor_type type : {tensor_type::q8_0, tensor_type::q4_1, tensor_type::q5_1, tensor_type::q4_k,
                           tensor_type::q5_k, tensor_type::q6_k}) {
    CAPTURE(std::string(tg::gguf::tensor_type_name(type)));
    const model::weight w = upload(cpu, type, 64, 1024, random_rows(type, 64, 1024));
    const bool k_offset = type == tensor_type::q4_k || type == tensor_type::q5_k;
    const bool offset = model::uses_activation_sums(w);
    CHECK(offset == (k_offset || type == tensor_type::q4_1 || type == tensor_type::q5_1));
    const auto gpu = model::matmul_form::gpu;
    const auto tokens = model::var_tokens;
    // Q4_1/Q5_1's per-32 sums are floats scaled per block (activation_sum_kernel): still read.
    CHECK(model::reads_activation_sums(model::matmul_kernel(w, tokens, -1, {}, gpu)) == (offset && !k_offset));
    CHECK(model::reads_activation_sums(model::matmul_batch_kernel(w, {}, tokens, gpu)) == (offset && !k_offset));
    CHECK(model::reads_activation_sums(model::matmul_prefill_kernel(w, {}, gpu)) == offset);
    CHECK(model::reads_activation_sums(model::matmul_prefill_kernel(w, {}, gpu, 32)) == offset);
    CHECK(model::reads_activation_sums(model::matmul_kernel(w, tokens, -1, {}, model::matmul_form::narrow)) == offset);
  }
}

TEST_CASE("every GPU schedule BEAM may try first for a decode matmul computes what the CPU does") {
  // BEAM on AMD:EMU (runtime/tune/gpu_candidates.hpp) compiles schedules the heuristic never
  // picks; each must be right on its own, not only agree with the default. The default's
  // neighbours and theirs, for the LLM's int8 matmul shapes, against the CPU device.
  const std::int64_t N = 40, K = 1024;
  tg::device cpu("CPU"), gfx11("AMD:EMU:gfx11");
  const std::vector<float> x = random_values(std::size_t(K), 7);
  for (tensor_type type : {tensor_type::q8_0, tensor_type::q4_k, tensor_type::q6_k}) {
    CAPTURE(std::string(tg::gguf::tensor_type_name(type)));
    const std::vector<std::byte> bytes = random_rows(type, N, K);
    const std::vector<float> want = tg::test::decode_matvec(cpu, upload(cpu, type, N, K, bytes), x);
    double scale = 0;
    for (float v : want) scale = std::max(scale, double(std::fabs(v)));
    const tg::test::decode_matvec_setup setup = tg::test::prepare_decode_matvec(gfx11, upload(gfx11, type, N, K, bytes), x);
    const tg::kernel_source source{setup.kernel.nodes, setup.kernel.global_ranges, "matvec"};
    const auto& traits = dynamic_cast<tg::amd::am_backend&>(gfx11.impl()).kernel_traits().gpu;
    const tg::tune::gpu_space space =
        tg::tune::gpu_space_of(source.nodes, source.global_ranges, traits.wave_lanes, traits.max_reduce_unroll);
    const auto first = tg::tune::normalize_gpu(tg::opt::choose_opts_for({.of = tg::opt::target_traits::kind::gpu, .gpu = traits}, source),
                                               source.global_ranges);
    std::vector<tg::codegen::kernel_opts> schedules{first};
    for (const auto& c : tg::tune::gpu_neighbours(first, space)) {
      schedules.push_back(c);
      for (const auto& d : tg::tune::gpu_neighbours(c, space))
        if (std::find(schedules.begin(), schedules.end(), d) == schedules.end()) schedules.push_back(d);
    }
    std::vector<void*> buffers;
    for (const tg::buffer& b : setup.slots) buffers.push_back(b.data());
    for (const auto& opts : schedules) {
      CAPTURE(tg::tune::to_text(opts));
      auto program = gfx11.impl().compile(tg::tune::source_with(source, opts));
      program->launch(buffers, tg::test::decode_matvec_vars);
      std::vector<float> got(static_cast<std::size_t>(N));
      setup.slots[0].copy_out(got.data(), got.size() * 4);
      double worst = 0;
      for (std::size_t i = 0; i < want.size(); ++i) worst = std::max(worst, double(std::fabs(got[i] - want[i])));
      CHECK(worst <= 1e-4 * scale);
    }
    MESSAGE(tg::gguf::tensor_type_name(type) << ": " << schedules.size() << " schedules");
  }
}

TEST_CASE("a full chunk's matmuls take a register tile of tokens on GPUs, and every schedule near it matches the CPU") {
  // 512 rows x 32 tokens: outputs enough to fill the GPU, so the heuristic tiles the tokens
  // (runtime/opt/gpu_heuristic.cpp: tile_split_dot) and each work-item takes whole blocks.
  const std::int64_t N = 512, K = 1024, T = 32;
  tg::device cpu("CPU"), gfx11("AMD:EMU:gfx11");
  const std::vector<float> x = random_values(std::size_t(K * T), 11);
  const auto& traits = dynamic_cast<tg::amd::am_backend&>(gfx11.impl()).kernel_traits().gpu;
  const tg::opt::target_traits target{.of = tg::opt::target_traits::kind::gpu, .gpu = traits};
  for (tensor_type type : {tensor_type::q8_0, tensor_type::q4_k, tensor_type::q6_k}) {
    CAPTURE(std::string(tg::gguf::tensor_type_name(type)));
    const std::vector<std::byte> bytes = random_rows(type, N, K);
    // The CPU's decode matmul, a token at a time.
    std::vector<float> want;
    const model::weight on_cpu = upload(cpu, type, N, K, bytes);
    for (std::int64_t t = 0; t < T; ++t) {
      const std::vector<float> row = tg::test::decode_matvec(
          cpu, on_cpu, std::vector<float>(x.begin() + std::ptrdiff_t(t * K), x.begin() + std::ptrdiff_t((t + 1) * K)));
      want.insert(want.end(), row.begin(), row.end());
    }
    double scale = 0;
    for (float v : want) scale = std::max(scale, double(std::fabs(v)));
    const tg::test::chunk_matmul_setup chunk = tg::test::prepare_chunk_matmul(gfx11, upload(gfx11, type, N, K, bytes), x, T);
    const tg::kernel_source source{chunk.kernel.nodes, chunk.kernel.global_ranges, "chunk", chunk.kernel.upcast,
                                   chunk.kernel.vector_lanes};
    const auto first = tg::tune::normalize_gpu(tg::opt::choose_opts_for(target, source), source.global_ranges);
    // The default: 4 tokens a work-item (Q6_K 2: linear_kernels.cpp), the block loop split alone, no unroll.
    CHECK(first.upcast == std::vector<int>{1, type == tensor_type::q6_k ? 2 : 4, 1});
    CHECK(first.nested_lanes == first.group_lanes);
    CHECK(first.group_lanes > 1);
    CHECK(first.reduce_unroll == 1);
    std::vector<tg::codegen::kernel_opts> schedules{first};
    const tg::tune::gpu_space space =
        tg::tune::gpu_space_of(source.nodes, source.global_ranges, traits.wave_lanes, traits.max_reduce_unroll);
    for (const auto& c : tg::tune::gpu_neighbours(first, space)) schedules.push_back(c);
    // BEAM may move the tile (runtime/tune/gpu_candidates.hpp): half and twice as many tokens.
    CHECK(std::count_if(schedules.begin(), schedules.end(), [&](const auto& o) { return o.upcast[1] != first.upcast[1]; }) == 2);
    std::vector<void*> buffers;
    for (const tg::buffer& b : chunk.slots) buffers.push_back(b.data());
    for (const auto& opts : schedules) {
      CAPTURE(tg::tune::to_text(opts));
      gfx11.impl().compile(tg::tune::source_with(source, opts))->launch(buffers, tg::test::chunk_matmul_vars(T));
      std::vector<float> got(want.size());
      chunk.slots[0].copy_out(got.data(), got.size() * 4);
      double worst = 0;
      for (std::size_t i = 0; i < want.size(); ++i) worst = std::max(worst, double(std::fabs(got[i] - want[i])));
      CHECK(worst <= 1e-4 * scale);
    }
    MESSAGE(tg::gguf::tensor_type_name(type) << ": " << schedules.size() << " schedules, default " << tg::tune::to_text(first));
  }
}

TEST_CASE("a full chunk's Q6_K matmul over more blocks than a wave takes a token a thread, its trips unrolled, and matches the CPU") {
  // K = 14336 (the 8B's down projection): 56 super-blocks a row, more than a wave's 32 lanes take
  // in one trip. Q6_K's tile of 2 tokens looped over two trips spilled (runtime/opt/gpu_heuristic.cpp:
  // tile_split_dot); Q4_K keeps its tile and loop.
  const std::int64_t N = 512, K = 14336, T = 32;  // rows enough to fill the GPU: a tile of tokens
  tg::device cpu("CPU"), gfx11("AMD:EMU:gfx11");
  const std::vector<float> x = random_values(std::size_t(K * T), 12);
  const auto& traits = dynamic_cast<tg::amd::am_backend&>(gfx11.impl()).kernel_traits().gpu;
  const tg::opt::target_traits target{.of = tg::opt::target_traits::kind::gpu, .gpu = traits};
  for (tensor_type type : {tensor_type::q6_k, tensor_type::q4_k}) {
    CAPTURE(std::string(tg::gguf::tensor_type_name(type)));
    const std::vector<std::byte> bytes = random_rows(type, N, K);
    const tg::test::chunk_matmul_setup chunk = tg::test::prepare_chunk_matmul(gfx11, upload(gfx11, type, N, K, bytes), x, T);
    const tg::kernel_source source{chunk.kernel.nodes, chunk.kernel.global_ranges, "chunk", chunk.kernel.upcast,
                                   chunk.kernel.vector_lanes};
    const auto opts = tg::opt::choose_opts_for(target, source);
    MESSAGE(tg::tune::to_text(opts));
    if (type == tensor_type::q6_k) {
      CHECK(opts.upcast == std::vector<int>{1, 1, 1});
      CHECK((opts.group_lanes == 32 && opts.nested_lanes == 32 && opts.reduce_unroll == 2));  // 2 trips in one
    } else {
      CHECK(opts.upcast == std::vector<int>{1, 4, 1});
      CHECK((opts.group_lanes == 32 && opts.nested_lanes == 32 && opts.reduce_unroll == 1));
      continue;  // its numerics: the test above
    }
    std::vector<void*> buffers;
    for (const tg::buffer& b : chunk.slots) buffers.push_back(b.data());
    gfx11.impl().compile(source)->launch(buffers, tg::test::chunk_matmul_vars(T));
    std::vector<float> got(std::size_t(N * T));
    chunk.slots[0].copy_out(got.data(), got.size() * 4);
    const model::weight on_cpu = upload(cpu, type, N, K, bytes);
    double worst = 0, scale = 0;
    for (std::int64_t t = 0; t < T; ++t) {
      const std::vector<float> want = tg::test::decode_matvec(
          cpu, on_cpu, std::vector<float>(x.begin() + std::ptrdiff_t(t * K), x.begin() + std::ptrdiff_t((t + 1) * K)));
      for (std::int64_t r = 0; r < N; ++r) {
        scale = std::max(scale, double(std::fabs(want[std::size_t(r)])));
        worst = std::max(worst, double(std::fabs(got[std::size_t(t * N + r)] - want[std::size_t(r)])));
      }
    }
    CHECK(worst <= 1e-4 * scale);
  }
}

TEST_CASE("a GPU's default decode matmul keeps each trip's loads in flight together, for every int8 type") {
  // K = 4096: 128 blocks of 32 values (16 super-blocks) a row, in a few unrolled trips a thread.
  // Held to LLVM's default register target, the scheduler issued Q5_0's and Q5_1's loads one wait
  // at a time (100 and 144 memory waits a wave; the codegen's waves-per-eu bound lifts that:
  // runtime/codegen/amdgpu_kernel.cpp), and Q4_0's and Q4_1's quads of nibble bytes were four
  // byte loads each (dequant_kernel.cpp now indexes them from the lane's first value). 16 waits a
  // wave allows a few trips; the bad schedules took 96 and more.
  const std::int64_t K = 4096, N = 64;
  tg::device gfx11("AMD:EMU:gfx11");
  auto& emulated = dynamic_cast<tg::emu::emu_device&>(gfx11.impl()).emulated_gpu();
  std::uint64_t waits = 0;
  emulated.observe_dispatches([&](const tg::emu::shader::launch&, const tg::emu::shader::dispatch_counters& k) {
    waits = std::max(waits, k.max_wave_memory_waits);
  });
  const std::vector<float> x = random_values(std::size_t(K), 9);
  for (tensor_type type : {tensor_type::q8_0, tensor_type::q4_0, tensor_type::q4_1, tensor_type::q5_0, tensor_type::q5_1,
                           tensor_type::q4_k, tensor_type::q5_k, tensor_type::q6_k}) {
    CAPTURE(std::string(tg::gguf::tensor_type_name(type)));
    const model::weight w = upload(gfx11, type, N, K, random_rows(type, N, K));
    tg::test::decode_matvec_setup setup = tg::test::prepare_decode_matvec(gfx11, w, x);
    gfx11.synchronize();
    waits = 0;  // the matmul's alone, not the activation rounding's
    gfx11.launch(setup.kernel, setup.slots, tg::test::decode_matvec_vars);
    gfx11.synchronize();
    CHECK(waits > 0);
    CHECK(waits <= 16);
  }
  emulated.observe_dispatches({});
}
