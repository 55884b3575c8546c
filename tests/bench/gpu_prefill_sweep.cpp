// gpu_prefill_sweep.cpp: the LLM's full-chunk prefill matmul (llm/model/linear_kernels.hpp:
// matmul_prefill_kernel with its token count fixed, the kernel a prompt's full chunks take on a
// GPU) on the emulated gfx1100, modeled as an RX 7900 XTX (drivers/emu/shader/modeled_cost.hpp),
// with the GPU heuristic's default opts and with other schedules, each checked against the
// default's output. Prints each schedule's modeled time, its bound, its share of the card's
// bandwidth, its VGPRs, the waves a SIMD holds at once and the most memory waits of a wave: where
// the heuristic's rules should point. A MODEL, not a measurement. TOKENS 0 takes decode's matmul
// instead (matmul_kernel, its token count a launch variable, run for one token), as the forward
// pass launches it for a decode step.
//
//   build/tests/bench/gpu_prefill_sweep [TYPE ROWS COLS TOKENS] ["opts" ...]
//       TYPE q8_0|q4_0|q4_1|q5_0|q5_1|q4_k|q5_k|q6_k (default q8_0 2048 2048 32); opts as the tuning cache writes them
//       (runtime/tune/opts_text.hpp), e.g. "upcast=1,4,1 lanes=0 group=16 unroll=8 nested=16";
//       without opts, a grid of token tiles x threads per output (splitting the blocks) x unrolls.
//   TG_SWEEP_GPU=gfx12 ...   the same on the emulated gfx1201, modeled as an RX 9070 XT
#include <tg/device.hpp>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "drivers/amd/am_backend.hpp"
#include "llm/gguf/tensor_type.hpp"
#include "llm/model/linear_kernels.hpp"
#include "runtime/opt/gpu_heuristic.hpp"
#include "runtime/opt/target_opts.hpp"
#include "runtime/tune/candidate_runner.hpp"
#include "runtime/tune/gpu_candidates.hpp"
#include "runtime/tune/opts_text.hpp"
#include "tests/bench/gpu_roofline_rig.hpp"
#include "tests/llm/model/decode_matvec.hpp"

namespace {

using tg::gguf::tensor_type;
namespace model = tg::model;

tensor_type type_named(const std::string& name) {
  for (tensor_type t : {tensor_type::q8_0, tensor_type::q4_0, tensor_type::q4_1, tensor_type::q5_0, tensor_type::q5_1,
                        tensor_type::q4_k, tensor_type::q5_k, tensor_type::q6_k}) {
    std::string n(tg::gguf::tensor_type_name(t));
    for (char& c : n) c = char(std::tolower(static_cast<unsigned char>(c)));
    if (n == name) return t;
  }
  std::fprintf(stderr, "gpu_prefill_sweep: no int8 type '%s' (q8_0, q4_0, q4_1, q5_0, q5_1, q4_k, q5_k, q6_k)\n", name.c_str());
  std::exit(2);
}

}  // namespace

int main(int argc, char** argv) {
  const std::string type_name = argc > 4 ? argv[1] : "q8_0";
  const tensor_type type = type_named(type_name);
  const std::int64_t N = argc > 4 ? std::atol(argv[2]) : 2048, K = argc > 4 ? std::atol(argv[3]) : 2048;
  const std::int64_t T = argc > 4 ? std::atol(argv[4]) : 32;
  std::vector<std::string> asked;
  for (int i = argc > 4 ? 5 : 1; i < argc; ++i) asked.emplace_back(argv[i]);

  const char* card = std::getenv("TG_SWEEP_GPU");  // gfx12: the emulated gfx1201 as an RX 9070 XT
  const bool gfx12 = card != nullptr && std::string(card) == "gfx12";
  tg::bench::roofline_gpu g(gfx12 ? "AMD:EMU:gfx1201:vram=2G" : "AMD:EMU:gfx11:vram=2G",
                            gfx12 ? tg::emu::shader::rx_9070_xt : tg::emu::shader::rx_7900_xtx);
  const std::vector<std::byte> bytes = tg::bench::quantized_rows(type, N, K);
  model::weight w{"w", type, N, K, std::int64_t(tg::gguf::row_size_bytes(type, std::size_t(K))), g.dev.allocate(bytes.size())};
  w.data.copy_in(bytes.data(), bytes.size());
  const bool decode = T == 0;
  const model::launch_values vars = decode ? tg::test::decode_matvec_vars : tg::test::chunk_matmul_vars(T);
  const std::vector<float> x = tg::bench::random_floats(std::size_t(K * std::max<std::int64_t>(T, 1)), 7);
  tg::ast::kernel kernel;
  std::vector<tg::buffer> slots;
  if (decode) {
    tg::test::decode_matvec_setup d = tg::test::prepare_decode_matvec(g.dev, w, x);
    kernel = std::move(d.kernel), slots = std::move(d.slots);
  } else {
    tg::test::chunk_matmul_setup c = tg::test::prepare_chunk_matmul(g.dev, w, x, T);
    kernel = std::move(c.kernel), slots = std::move(c.slots);
  }
  const tg::buffer& out = slots[0];
  std::vector<void*> pointers;
  for (const tg::buffer& b : slots) pointers.push_back(b.data());
  const tg::kernel_source source{kernel.nodes, kernel.global_ranges, decode ? "decode" : "prefill", kernel.upcast,
                                 kernel.vector_lanes};
  const auto& traits = dynamic_cast<tg::amd::am_backend&>(g.dev.impl()).kernel_traits().gpu;
  const tg::codegen::kernel_opts first =
      tg::tune::normalize_gpu(tg::opt::choose_opts_for({.of = tg::opt::target_traits::kind::gpu, .gpu = traits}, source),
                              source.global_ranges);

  std::vector<tg::codegen::kernel_opts> schedules{first};
  for (const std::string& text : asked) {
    auto parsed = tg::tune::parse_opts(text);
    if (!parsed) {
      std::fprintf(stderr, "gpu_prefill_sweep: cannot read opts '%s'\n", text.c_str());
      return 2;
    }
    schedules.push_back(*parsed);
  }
  if (asked.empty() && decode) {
    // Decode's dot keeps its lanes (8 or 16 threads a block, as the default has them): the rest
    // of a group splits the block loop (nested lanes) x unrolls.
    const int lanes = first.group_lanes / std::max(1, first.nested_lanes);
    const std::int64_t blocks = K / (tg::gguf::traits_of(type).block_elems);
    for (int nested = 1; lanes * nested <= 64 && nested <= blocks; nested *= 2)
      for (int unroll : {1, 2, 4, 8, 16, 32}) {
        if (std::int64_t(unroll) * nested > 2 * blocks) continue;
        tg::codegen::kernel_opts o = first;
        o.group_lanes = lanes * nested, o.nested_lanes = nested, o.reduce_unroll = unroll;
        schedules.push_back(o);
      }
  } else if (asked.empty()) {
    // The chunk kernel's lanes are one thread's (linear_kernels.cpp), so its group splits only the
    // block loop (nested lanes = group): tiles x groups (within the row's blocks) x unrolls.
    const std::int64_t blocks = K / (tg::gguf::traits_of(type).block_elems);
    for (int tile : {1, 2, 4, 8})
      for (int group = 1; group <= 32 && group <= blocks; group *= 2)
        for (int unroll : {1, 2, 4, 8}) {
          if (std::int64_t(unroll) * group > 2 * blocks) continue;
          tg::codegen::kernel_opts o{{1, tile, 1}, false};
          o.group_lanes = group, o.nested_lanes = group, o.reduce_unroll = unroll;
          schedules.push_back(o);
        }
  }
  const char* modeled = gfx12 ? "RX 9070 XT modeled from gfx1201" : "RX 7900 XTX modeled from gfx1100";
  if (decode)
    std::printf("%s %lld x %lld, one token (decode's matmul), %s\n", type_name.c_str(), (long long)N, (long long)K, modeled);
  else
    std::printf("%s %lld x %lld, %lld tokens (the full-chunk prefill matmul), %s\n", type_name.c_str(), (long long)N,
                (long long)K, (long long)T, modeled);
  std::printf("%-58s %10s %8s %6s %9s %9s %9s %6s %6s %6s\n", "opts", "model us", "bound", "BW", "mem us", "issue us",
              "lat us", "VGPRs", "waves", "waits");
  std::vector<float> want;
  for (std::size_t i = 0; i < schedules.size(); ++i) {
    const auto& opts = schedules[i];
    std::vector<float> got(std::size_t(N * std::max<std::int64_t>(T, 1)));
    try {
      auto program = g.dev.impl().compile(tg::tune::source_with(source, opts));
      g.seen.clear();
      program->launch(pointers, vars);
      g.dev.synchronize();
      out.copy_out(got.data(), got.size() * 4);
    } catch (const std::exception& e) {
      std::printf("%-58s failed: %s\n", tg::tune::to_text(opts).c_str(), e.what());
      continue;
    }
    if (i == 0) want = got;
    double scale = 0, worst = 0;
    for (std::size_t j = 0; j < want.size(); ++j) {
      scale = std::max(scale, double(std::fabs(want[j])));
      worst = std::max(worst, double(std::fabs(got[j] - want[j])));
    }
    std::lock_guard lock(g.mutex);
    if (g.seen.size() != 1 || !(worst <= 1e-4 * scale)) {
      std::printf("%-58s wrong (%zu dispatches, error %.2e of %.2e)\n", tg::tune::to_text(opts).c_str(), g.seen.size(), worst, scale);
      continue;
    }
    const auto m = tg::bench::model(g.card, g.seen[0]);
    const tg::emu::shader::dispatch_counters& k = g.seen[0];
    std::printf("%-58s %10.2f %8s %5.1f%% %9.2f %9.2f %9.2f %6u %6u %6llu%s\n", tg::tune::to_text(opts).c_str(),
                m.total_s * 1e6, m.bound(), 100 * m.bandwidth_share(), m.memory_s * 1e6, m.issue_s * 1e6,
                m.latency_s * 1e6,
                k.vgprs, k.waves_per_simd, (unsigned long long)k.max_wave_memory_waits, i == 0 ? "  (default)" : "");
    std::fflush(stdout);
  }
  return 0;
}
