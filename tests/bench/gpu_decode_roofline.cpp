// gpu_decode_roofline.cpp: the LLM's decode matmuls (llm/model/linear_kernels.hpp, the kernels
// the CPU runs too, with their activation rounding) for one token, compiled for gfx11 and gfx12
// with the default GPU opts, run on the emulated GPU, checked against the CPU, and modeled on an
// RX 7900 XTX and an RX 9070 XT (drivers/emu/shader/modeled_cost.hpp). The shapes are Llama-3.2-1B's and
// Llama-3.1-8B's projections; the weights are random values quantized by llm-synth's quantizer.
// "weights GB/s" is the weight matrix's bytes over the modeled time of the token's matmul
// dispatches (rounding included), against the card's bandwidth.
//
//   build/tests/bench/gpu_decode_roofline          1B shapes, and the 8B attention projection
//   TG_DECODE_SHAPES=all build/tests/bench/gpu_decode_roofline   the 8B FFN too (slow to interpret)
#include <tg/device.hpp>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "llm/gguf/tensor_type.hpp"
#include "llm/model/linear_kernels.hpp"
#include "llm/synth/quantize.hpp"
#include "tests/bench/gpu_roofline_rig.hpp"
#include "tests/llm/model/decode_matvec.hpp"

namespace {

using tg::bench::roofline_gpu;
using tg::gguf::tensor_type;
namespace model = tg::model;

struct shape {
  const char* name;
  std::int64_t rows, cols;  // out x in
};

// A weight of random values in [-1, 1] quantized as `type`, on `dev`.
model::weight make_weight(tg::device& dev, tensor_type type, std::int64_t rows, std::int64_t cols,
                          const std::vector<std::byte>& bytes) {
  const std::int64_t row_bytes = std::int64_t(tg::gguf::row_size_bytes(type, std::size_t(cols)));
  model::weight w{"w", type, rows, cols, row_bytes, dev.allocate(bytes.size())};
  w.data.copy_in(bytes.data(), bytes.size());
  return w;
}


}  // namespace

int main() {
  const char* which = std::getenv("TG_DECODE_SHAPES");
  const bool all = which != nullptr && std::string(which) == "all";
  tg::bench::print_preamble("the LLM's decode matmuls for one token (activation rounding + matmul).");
  roofline_gpu gfx11("AMD:EMU:gfx11", tg::emu::shader::rx_7900_xtx), gfx12("AMD:EMU:gfx12", tg::emu::shader::rx_9070_xt);
  std::vector<roofline_gpu*> gpus{&gfx11, &gfx12};
  std::vector<shape> shapes{{"1B attn q/o 2048x2048", 2048, 2048}, {"1B ffn up 8192x2048", 8192, 2048},
                            {"8B attn q/o 4096x4096", 4096, 4096}};
  if (all) shapes.push_back({"8B ffn up 14336x4096", 14336, 4096});
  tg::device cpu("CPU");
  tg::bench::print_header();
  std::vector<std::string> summary;
  for (const shape& s : shapes)
    for (tensor_type type : {tensor_type::q8_0, tensor_type::q4_k, tensor_type::q6_k}) {
      const std::string label = std::string(s.name) + " " + std::string(tg::gguf::tensor_type_name(type));
      const std::vector<std::byte> bytes = tg::bench::quantized_rows(type, s.rows, s.cols);
      const std::vector<float> x = tg::bench::random_floats(std::size_t(s.cols), 99);
      const std::vector<float> want = tg::test::decode_matvec(cpu, make_weight(cpu, type, s.rows, s.cols, bytes), x);
      for (roofline_gpu* g : gpus) {
        std::vector<float> got;
        try {
          const model::weight w = make_weight(g->dev, type, s.rows, s.cols, bytes);
          g->seen.clear();
          got = tg::test::decode_matvec(g->dev, w, x);
        } catch (const std::exception& e) {
          std::printf("%-26s %-12s failed: %s%s\n", label.c_str(), g->card.name, e.what(), g->faults().c_str());
          continue;
        }
        const double err = tg::bench::relative_error(got, want);
        if (!(err < 1e-3)) {
          std::printf("%-26s %-12s wrong result (relative error %.2e against the CPU): not modeled\n", label.c_str(),
                      g->card.name, err);
          continue;
        }
        const double seconds = tg::bench::print_dispatches(label.c_str(), *g);
        char line[200];
        std::snprintf(line, sizeof line, "%-30s %-12s %8.2f MB %9.2f us  weights %7.1f GB/s = %5.1f%% of %.0f GB/s",
                      label.c_str(), g->card.name, double(bytes.size()) / 1e6, seconds * 1e6, double(bytes.size()) / seconds / 1e9,
                      100 * double(bytes.size()) / seconds / g->card.bytes_per_second, g->card.bytes_per_second / 1e9);
        summary.push_back(line);
      }
    }
  std::printf("\nper token (all dispatches of the matmul, modeled):\n");
  for (const std::string& line : summary) std::printf("%s\n", line.c_str());
  return 0;
}
