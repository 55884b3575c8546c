// nv_matvec_sweep.cpp: the LLM's decode matmuls (llm/model/linear_kernels.hpp's matmul_kernel, the
// kernel every device runs) on an NVIDIA GPU at Llama-3.1-8B's shapes, with the GPU heuristic's
// default opts and with neighbouring ones (the split reduce's unroll, the threads per block of the
// block loop), each checked against the default's output and timed with CUDA events (the best of
// 5 windows of 40 launches). The figure
// is the weight's bytes over the kernel's time, against the device-to-device copy bandwidth of
// the same run: what a default should reach, and which way the heuristic's GPU numbers should
// move. Launches rotate over copies of the weight that together pass 256 MB, so the card's L2
// (60 MB on an H200) does not serve a launch what the one before it read.
//
//   build/tests/bench/nv_matvec_sweep [NV:<n>] [--defaults]   needs an NVIDIA GPU (scripts/device-check.sh
//                                                             runs it); --defaults: the default opts only
#include <tg/device.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "drivers/nv/nv_backend.hpp"
#include "llm/gguf/tensor_type.hpp"
#include "runtime/device/kernel_compiler.hpp"
#include "runtime/opt/target_opts.hpp"
#include "tests/bench/random_weights.hpp"
#include "tests/llm/model/decode_matvec.hpp"

namespace {

using tg::gguf::tensor_type;
namespace model = tg::model;
namespace nv = tg::nv;

struct shape {
  const char* name;
  std::int64_t rows, cols;  // out x in
};


// GPU time of `work` by CUDA events on the device's stream.
template <class Work>
double event_seconds(nv::nv_backend& gpu, Work&& work) {
  const nv::cuda_driver& cu = gpu.driver();
  gpu.make_current();
  nv::CUevent start = nullptr, end = nullptr;
  nv::check(cu, cu.cuEventCreate(&start, 0), "cuEventCreate");
  nv::check(cu, cu.cuEventCreate(&end, 0), "cuEventCreate");
  nv::check(cu, cu.cuEventRecord(start, gpu.stream()), "cuEventRecord");
  work();
  nv::check(cu, cu.cuEventRecord(end, gpu.stream()), "cuEventRecord");
  gpu.synchronize();
  float ms = 0;
  nv::check(cu, cu.cuEventElapsedTime(&ms, start, end), "cuEventElapsedTime");
  cu.cuEventDestroy(start);
  cu.cuEventDestroy(end);
  return double(ms) * 1e-3;
}

double copy_bandwidth(tg::device& dev, nv::nv_backend& gpu) {
  const std::size_t bytes = std::size_t(1) << 30;
  tg::buffer a = dev.allocate(bytes), b = dev.allocate(bytes);
  auto address = [](const tg::buffer& x) { return nv::CUdeviceptr(reinterpret_cast<std::uintptr_t>(x.data())); };
  double best = 1e30;
  for (int i = 0; i < 6; ++i) {
    const double s = event_seconds(gpu, [&] {
      nv::check(gpu.driver(), gpu.driver().cuMemcpyDtoDAsync(address(b), address(a), bytes, gpu.stream()), "cuMemcpyDtoDAsync");
    });
    if (i > 0) best = std::min(best, s);
  }
  return 2.0 * double(bytes) / best;  // read and written
}

// The GPU fields of the opts: threads per output, of them per block of the block loop, unroll.
std::string gpu_text(const tg::codegen::kernel_opts& o) {
  std::string t = "group " + std::to_string(o.group_lanes) + ", nested " + std::to_string(o.nested_lanes) + ", unroll " +
                  std::to_string(o.reduce_unroll);
  for (std::size_t i = 0; i < o.upcast.size(); ++i) t += (i ? "x" : ", upcast ") + std::to_string(o.upcast[i]);
  return t;
}

// The opts to try: the default, then every split of the group's threads between the row's blocks
// and each block's lanes (nested_lanes 1 .. 16) with every unroll of the split reduce (1 .. 16).
std::vector<tg::codegen::kernel_opts> variants(const tg::codegen::kernel_opts& base) {
  std::vector<tg::codegen::kernel_opts> out{base};
  if (base.group_lanes <= 1) return out;
  for (int nested = 1; nested <= 16 && nested < base.group_lanes; nested *= 2)
    for (int unroll = 1; unroll <= 16; unroll *= 2) {
      tg::codegen::kernel_opts o = base;
      o.nested_lanes = nested;
      o.reduce_unroll = unroll;
      if (gpu_text(o) != gpu_text(base)) out.push_back(o);
    }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const bool defaults_only = argc > 2 && std::string(argv[2]) == "--defaults";
    tg::device dev(argc > 1 ? argv[1] : "NV");
    auto& gpu = dynamic_cast<nv::nv_backend&>(dev.impl());
    tg::kernel_compiler& compiler = *gpu.compiler();
    const double copy = copy_bandwidth(dev, gpu);
    std::printf("%s: %s, %d SMs; device-to-device copy %.1f GB/s\n", gpu.name().c_str(), gpu.info().name.c_str(),
                gpu.info().multiprocessors, copy / 1e9);
    std::printf("%-28s %-44s %9s %9s %7s %s\n", "matmul", "opts", "us", "GB/s", "of copy", "vs default");
    const std::vector<shape> shapes{{"q/o 4096x4096", 4096, 4096}, {"k/v 1024x4096", 1024, 4096},
                                    {"gate/up 14336x4096", 14336, 4096}, {"down 4096x14336", 4096, 14336}};
    const model::launch_values& vars = tg::test::decode_matvec_vars;
    std::vector<std::string> summary;
    for (const shape& s : shapes)
      for (tensor_type type : {tensor_type::q8_0, tensor_type::q4_k, tensor_type::q6_k}) {
        const std::string label = std::string(s.name) + " " + std::string(tg::gguf::tensor_type_name(type));
        const std::vector<std::byte> bytes = tg::bench::quantized_rows(type, s.rows, s.cols);
        // Copies of the weight that together pass 256 MB.
        const std::size_t copies = std::max<std::size_t>(2, (std::size_t(256) << 20) / bytes.size() + 1);
        std::vector<model::weight> ws;
        for (std::size_t c = 0; c < copies; ++c) {
          model::weight w{"w", type, s.rows, s.cols, std::int64_t(tg::gguf::row_size_bytes(type, std::size_t(s.cols))),
                          dev.allocate(bytes.size())};
          w.data.copy_in(bytes.data(), bytes.size());
          ws.push_back(std::move(w));
        }
        // The token's activations, rounded as the forward pass rounds them for this type.
        tg::test::decode_matvec_setup setup =
            tg::test::prepare_decode_matvec(dev, ws[0], tg::bench::random_floats(std::size_t(s.cols), 99));
        const tg::ast::kernel& k = setup.kernel;
        std::vector<tg::buffer>& slots = setup.slots;
        const tg::buffer out = slots[0];
        const tg::kernel_source source{k.nodes, k.global_ranges, "matvec"};
        const tg::codegen::kernel_opts base = tg::opt::choose_opts_for(compiler.traits(), source);
        std::vector<float> want;
        double base_seconds = 0, best_seconds = 0;
        std::string best;
        const std::vector<tg::codegen::kernel_opts> tried = defaults_only ? std::vector{base} : variants(base);
        for (const tg::codegen::kernel_opts& opts : tried) {
          const std::string text = gpu_text(opts);
          std::shared_ptr<tg::program> p;
          try {
            p = compiler.compile(compiler.render(source, opts));
          } catch (const std::exception& e) {
            std::printf("%-28s %-44s does not compile: %s\n", label.c_str(), text.c_str(), e.what());
            continue;
          }
          std::vector<void*> pointers;
          for (const tg::buffer& b : slots) pointers.push_back(b.data());
          p->launch(pointers, vars);
          dev.synchronize();
          std::vector<float> got(std::size_t(s.rows));
          out.copy_out(got.data(), got.size() * 4);
          if (want.empty()) want = got;
          const double err = tg::bench::relative_error(got, want);
          if (!(err < 1e-4)) {
            std::printf("%-28s %-44s wrong result (relative error %.2e against the default's)\n", label.c_str(), text.c_str(), err);
            continue;
          }
          // The best of 5 windows of 40 launches: one window measured the same kernel 10-40% apart
          // between runs on an H200 (a clock or the L2's state at its start).
          const int launches = 40;
          double seconds = 1e30;
          for (int window = 0; window < 5; ++window)
            seconds = std::min(seconds, event_seconds(gpu, [&] {
                                          for (int i = 0; i < launches; ++i) {
                                            pointers[1] = ws[std::size_t(i) % copies].data.data();
                                            p->launch(pointers, vars);
                                          }
                                        }) / launches);
          if (base_seconds == 0) base_seconds = seconds;
          if (best.empty() || seconds < best_seconds) best = text, best_seconds = seconds;
          std::printf("%-28s %-44s %9.2f %9.1f %6.1f%% %6.2fx\n", label.c_str(), text.c_str(), seconds * 1e6,
                      double(bytes.size()) / seconds / 1e9, 100 * double(bytes.size()) / seconds / copy, base_seconds / seconds);
        }
        if (best_seconds > 0)
          summary.push_back(label + ": default " + gpu_text(base) + " " + std::to_string(int(100 * double(bytes.size()) / base_seconds / copy)) +
                            "% of copy; best " + best + " " + std::to_string(int(100 * double(bytes.size()) / best_seconds / copy)) + "%");
      }
    std::printf("\nper matmul, the default and the fastest opts:\n");
    for (const std::string& line : summary) std::printf("%s\n", line.c_str());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "nv_matvec_sweep: %s\n", e.what());
    return 1;
  }
  return 0;
}
