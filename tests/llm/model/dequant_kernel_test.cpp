// dequant_kernel_test.cpp: the kernels' in-kernel dequantization against the scalar reference
// on quant-golden.gguf, element by element and inside a matmul.
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "tests/support/fixtures.hpp"
#include "llm/gguf/dequant_reference.hpp"
#include "llm/gguf/gguf_file.hpp"
#include "llm/model/activation_kernels.hpp"
#include "llm/model/dequant_kernel.hpp"
#include "llm/model/launch_vars.hpp"
#include "llm/model/linear_kernels.hpp"

namespace {

tg::device& cpu() {
  static tg::device d("CPU");
  return d;
}

// Every value of w, decoded by a kernel: out[r][g * gs + j].
std::vector<float> dequant_all(const tg::model::weight& w) {
  tg::kernel_builder kb;
  const std::int64_t gs = tg::model::group_size(w.type, w.cols);
  auto r = kb.output_range(w.rows);
  auto g = kb.output_range(w.cols / gs);
  auto j = kb.output_range(gs);
  kb.store(0, r * w.cols + g * gs + j, tg::model::dequant(kb, 1, w.type, w.row_bytes, r, g, j));
  tg::buffer out = cpu().allocate(std::size_t(w.rows * w.cols) * 4);
  cpu().launch(kb.finish(), std::vector<tg::buffer>{out, w.data});
  std::vector<float> got(std::size_t(w.rows * w.cols));
  out.copy_out(got.data(), got.size() * 4);
  return got;
}

std::vector<float> reference(const tg::gguf::file& f, const tg::model::weight& w) {
  std::vector<float> want(std::size_t(w.rows * w.cols));
  const std::byte* data = f.tensor_data(f.get_tensor(w.name));
  for (std::int64_t r = 0; r < w.rows; ++r)
    tg::gguf::dequantize_row(w.type, data + r * w.row_bytes, want.data() + r * w.cols, std::size_t(w.cols));
  return want;
}

TEST_CASE("in-kernel dequantization matches the reference for every supported type") {
  auto f = tg::gguf::file::open(tg::test::fixture("quant/quant-golden.gguf"));
  for (const char* type : {"F16", "BF16", "Q8_0", "Q4_0", "Q4_1", "Q5_0", "Q5_1", "Q2_K", "Q3_K", "Q4_K", "Q5_K", "Q6_K"}) {
    CAPTURE(type);
    auto w = tg::model::load_weight(cpu(), f, std::string(type) + ".q", 768, 256);
    auto got = dequant_all(w);
    auto want = reference(f, w);
    double worst = 0;
    for (std::size_t i = 0; i < got.size(); ++i)
      worst = std::fmax(worst, std::fabs(double(got[i]) - want[i]) / (std::fabs(want[i]) + 1e-3));
    CHECK(worst <= 1e-6);
  }
}

TEST_CASE("the quantized matmul kernel matches a float64 matmul of the dequantized weights") {
  auto f = tg::gguf::file::open(tg::test::fixture("quant/quant-golden.gguf"));
  const std::int64_t T = 3;
  std::vector<float> x(std::size_t(T * 256));
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = float(std::sin(double(i) * 0.37));
  tg::buffer xb = cpu().allocate(x.size() * 4), out = cpu().allocate(std::size_t(T * 768) * 4);
  xb.copy_in(x.data(), x.size() * 4);
  for (const char* type : {"F16", "BF16", "Q8_0", "Q4_0", "Q4_1", "Q5_0", "Q5_1", "Q2_K", "Q3_K", "Q4_K", "Q5_K", "Q6_K"}) {
    CAPTURE(type);
    auto w = tg::model::load_weight(cpu(), f, std::string(type) + ".q", 768, 256);
    auto deq = reference(f, w);
    tg::model::launch_values vars{T, 0, 0, 0};
    // Q8_0 and the K-quants take x rounded to 8 bits (activation_kernels.hpp; checked exactly
    // in int8_matmul_test.cpp): here only against the unrounded float64 product, more loosely.
    const bool int8 = tg::model::uses_int8_activations(w);
    if (int8) {
      const std::int64_t block = tg::model::activation_block_for(w);
      auto kernel = tg::model::matmul_kernel(w, tg::model::var_tokens, -1);
      const bool bytes = tg::model::reads_activation_bytes(kernel);  // quads (AVX2, VNNI) take int8, pairs int16
      tg::buffer xs = cpu().allocate(std::size_t(T * 256 / 32) * 4), xq = cpu().allocate(std::size_t(T * 256) * 2);
      cpu().launch(tg::model::activation_scale_kernel(256, tg::model::var_tokens, -1, block), std::vector<tg::buffer>{xs, xb}, vars);
      cpu().launch(tg::model::activation_quant_kernel(256, tg::model::var_tokens, -1, block, bytes),
                   std::vector<tg::buffer>{xq, xb, xs}, vars);
      tg::buffer xsum = cpu().allocate(std::size_t(T * 256 / 32) * 4);
      auto sum = tg::model::activation_sum_kernel(256, tg::model::var_tokens, block, bytes);
      std::vector<tg::buffer> sum_slots{xsum, xq, xs};
      sum_slots.resize(std::size_t(sum.slot_count));
      cpu().launch(sum, sum_slots, vars);
      std::vector<tg::buffer> slots{out, w.data, xq, out, out, xs, xsum};
      slots.resize(std::size_t(kernel.slot_count));
      cpu().launch(kernel, slots, vars);
    } else {
      cpu().launch(tg::model::matmul_kernel(w, tg::model::var_tokens, -1), std::vector<tg::buffer>{out, w.data, xb}, vars);
    }
    std::vector<float> got(std::size_t(T * 768));
    out.copy_out(got.data(), got.size() * 4);
    double worst = 0;
    for (std::int64_t t = 0; t < T; ++t)
      for (std::int64_t n = 0; n < 768; ++n) {
        double s = 0;
        for (std::int64_t k = 0; k < 256; ++k) s += double(deq[std::size_t(n * 256 + k)]) * x[std::size_t(t * 256 + k)];
        worst = std::fmax(worst, std::fabs(got[std::size_t(t * 768 + n)] - s));
      }
    CHECK(worst <= (int8 ? 2e-2 : 1e-4));
  }
}

}  // namespace
