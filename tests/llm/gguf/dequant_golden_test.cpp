// dequant_golden_test.cpp: the reference dequantizer against llama.cpp's own output.
//
// quant-golden.gguf holds, per type T, llama.cpp-quantized data `T.q` and gguf-py's float32
// dequantization `T.f32` (fixtures README); ours must match it bit for bit. The tiny models
// then check whole files: quantized weights decode close to the F32 model they came from.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "tests/support/fixtures.hpp"
#include "llm/gguf/dequant_reference.hpp"
#include "llm/gguf/gguf_file.hpp"

namespace tg::gguf {
namespace {

std::vector<float> dequantize(const file& f, const tensor_info& t) {
  std::vector<float> out(t.element_count());
  const std::uint64_t row_bytes = t.row_size_bytes();
  for (std::uint64_t r = 0; r < t.row_count(); ++r)
    dequantize_row(t.type, f.tensor_data(t) + r * row_bytes, out.data() + r * t.ne[0], t.ne[0]);
  return out;
}

struct error_stats {
  double max_abs = 0, rel_rms = 0;
};

error_stats compare(const std::vector<float>& got, const std::vector<float>& want) {
  double err2 = 0, ref2 = 0;
  error_stats s;
  for (std::size_t i = 0; i < got.size(); ++i) {
    const double e = static_cast<double>(got[i]) - want[i];
    s.max_abs = std::max(s.max_abs, std::abs(e));
    err2 += e * e;
    ref2 += static_cast<double>(want[i]) * want[i];
  }
  s.rel_rms = std::sqrt(err2 / ref2);
  return s;
}

// Every tensor of `quantized` decodes to within `max_rel_rms` of the F32 model's tensor.
void check_close_to_f32(const std::string& model, double max_rel_rms) {
  const file ref = file::open(test::fixture("models/tiny-llama-f32.gguf"));
  const file q = file::open(test::fixture(model));
  for (const tensor_info& t : q.tensors()) {
    CAPTURE(t.name);
    CAPTURE(tensor_type_name(t.type));
    const tensor_info& r = ref.get_tensor(t.name);
    REQUIRE(r.ne == t.ne);
    const std::vector<float> got = dequantize(q, t);
    const std::vector<float> want = dequantize(ref, r);
    const error_stats s = compare(got, want);
    CAPTURE(s.max_abs);
    CHECK(s.rel_rms <= max_rel_rms);
    if (t.type == tensor_type::f32) CHECK(s.max_abs == 0.0);
  }
}

}  // namespace

TEST_CASE("every quant type dequantizes to llama.cpp's floats bit for bit") {
  const file f = file::open(test::fixture("quant/quant-golden.gguf"));
  int types_checked = 0;
  for (const tensor_info& q : f.tensors()) {
    if (!q.name.ends_with(".q")) continue;
    const std::string type_name(q.name.substr(0, q.name.size() - 2));
    CAPTURE(type_name);
    CHECK(tensor_type_name(q.type) == type_name);
    const tensor_info& ref = f.get_tensor(type_name + ".f32");
    REQUIRE(ref.type == tensor_type::f32);
    REQUIRE(ref.ne == q.ne);
    const std::vector<float> got = dequantize(f, q);
    std::size_t mismatches = 0, first = got.size();
    for (std::size_t i = 0; i < got.size(); ++i)
      if (std::memcmp(&got[i], f.tensor_data(ref) + 4 * i, 4) != 0 && mismatches++ == 0) first = i;
    CAPTURE(first);
    CHECK(mismatches == 0);
    ++types_checked;
  }
  CHECK(types_checked == 12);  // Q4_0 Q4_1 Q5_0 Q5_1 Q8_0 Q2_K..Q6_K BF16 F16
}

TEST_CASE("the Q8_0 tiny model decodes close to the F32 model") { check_close_to_f32("models/tiny-llama-q8_0.gguf", 0.01); }

TEST_CASE("the Q4_K_M tiny model decodes close to the F32 model") {
  check_close_to_f32("models/tiny-llama-q4_k_m.gguf", 0.1);
}

}  // namespace tg::gguf
