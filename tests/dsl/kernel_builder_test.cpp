// kernel_builder_test.cpp: hand-written kernels through the same codegen, checked against
// plain C++; a kernel built at compile time too.
#include <tg/tg.hpp>

#include "tests/dsl/reference.hpp"

namespace {

// y[i] = sum_k W[i, k] * x[k]: a matvec written by hand.
constexpr tg::ast::kernel matvec(std::int64_t rows, std::int64_t cols) {
  tg::kernel_builder kb;
  auto i = kb.output_range(rows);
  auto k = kb.reduce_range(cols);
  auto w = kb.load<float>(1, i * cols + k);
  auto xk = kb.load<float>(2, k);
  kb.store(0, i, kb.sum(w * xk, k));
  return kb.finish();
}

static_assert(matvec(4, 8).global_ranges == 1, "the builder works at compile time");
static_assert(matvec(4, 8).slot_count == 3);

TEST_CASE("a hand-built matvec kernel matches plain C++") {
  auto& dev = tg::test::test_device();
  const std::int64_t rows = 37, cols = 300;
  const auto w = tg::test::random_floats(std::size_t(rows * cols), 1), x = tg::test::random_floats(std::size_t(cols), 2);
  tg::buffer out = dev.allocate(std::size_t(rows) * 4), wb = dev.allocate(w.size() * 4), xb = dev.allocate(x.size() * 4);
  wb.copy_in(w.data(), w.size() * 4);
  xb.copy_in(x.data(), x.size() * 4);
  dev.launch(matvec(rows, cols), std::vector<tg::buffer>{out, wb, xb});
  std::vector<float> got(static_cast<std::size_t>(rows));
  out.copy_out(got.data(), got.size() * 4);
  std::vector<double> want;
  for (std::int64_t r = 0; r < rows; ++r) {
    double s = 0;
    for (std::int64_t c = 0; c < cols; ++c) s += double(w[std::size_t(r * cols + c)]) * x[std::size_t(c)];
    want.push_back(s);
  }
  tg::test::check_close(got, want, 1e-4);
}

TEST_CASE("integer bit arithmetic unpacks 4-bit values as a quantized kernel would") {
  // out[i] = (bytes[i / 2] >> (4 * (i % 2))) & 15, minus 8, as float
  tg::kernel_builder kb;
  auto i = kb.output_range(16);
  auto byte = kb.cast(tg::dtype::int32, kb.load<std::uint8_t>(1, i / 2));
  auto nibble = (byte >> kb.cast(tg::dtype::int32, (i % 2) * 4)) & 15;
  kb.store(0, i, kb.cast(tg::dtype::float32, nibble - 8));
  auto& dev = tg::test::test_device();
  std::vector<std::uint8_t> bytes = {0x10, 0x32, 0x54, 0x76, 0x98, 0xBA, 0xDC, 0xFE};
  tg::buffer out = dev.allocate(64), in = dev.allocate(8);
  in.copy_in(bytes.data(), 8);
  dev.launch(kb.finish(), std::vector<tg::buffer>{out, in});
  std::vector<float> got(16);
  out.copy_out(got.data(), 64);
  for (int k = 0; k < 16; ++k) CHECK(got[std::size_t(k)] == float(k - 8));
}

TEST_CASE("a kernel with a variable bound runs for each binding") {
  tg::kernel_builder kb;
  auto i = kb.output_range(kb.variable(0));
  kb.store(0, i, kb.cast(tg::dtype::float32, i * i));
  tg::ast::kernel k = kb.finish();
  auto& dev = tg::test::test_device();
  tg::buffer out = dev.allocate(100 * 4);
  for (std::int64_t n : {1, 10, 100}) {
    std::vector<float> zeros(100, -1.0f);
    out.copy_in(zeros.data(), 400);
    std::vector<std::int64_t> vars = {n};
    dev.launch(k, std::vector<tg::buffer>{out}, vars);
    std::vector<float> got(100);
    out.copy_out(got.data(), 400);
    for (std::int64_t j = 0; j < 100; ++j) CHECK(got[std::size_t(j)] == (j < n ? float(j * j) : -1.0f));
  }
}

TEST_CASE("the builder refuses output ranges after reduce ranges and bad slots") {
  if (tg::test::skip_unless_cpu("the builder's checks involve no device; the CPU run covers them")) return;
  tg::kernel_builder kb;
  kb.reduce_range(4);
  CHECK_THROWS_WITH_AS(kb.output_range(4), "kernel_builder: create every output range before the reduce ranges",
                       tg::usage_error);
  CHECK_THROWS_AS(kb.load<float>(99, kb.index(0)), tg::usage_error);
}

}  // namespace

namespace {

TEST_CASE("borrowed host memory is read in place by the CPU device") {
  if (tg::test::skip_unless_cpu("borrow_host reads host memory in place, which only the CPU device can")) return;
  auto& dev = tg::test::test_device();
  std::vector<float> host = {1, 2, 3, 4};
  tg::buffer in = dev.borrow_host(host.data(), 16);
  CHECK(in.data() == static_cast<void*>(host.data()));
  tg::kernel_builder kb;
  auto i = kb.output_range(4);
  kb.store(0, i, kb.load<float>(1, i) * 10.0);
  tg::buffer out = dev.allocate(16);
  dev.launch(kb.finish(), std::vector<tg::buffer>{out, in});
  std::vector<float> got(4);
  out.copy_out(got.data(), 16);
  CHECK(got == std::vector<float>{10, 20, 30, 40});
}

}  // namespace

namespace {

TEST_CASE("a kernel's own loop shape is honoured, cached apart, and computes the same") {
  if (tg::test::skip_unless_cpu("a kernel's loop shape (upcast, vector lanes) is a CPU schedule; the AMD code generator has no schedules yet")) return;
  tg::device dev("CPU");
  const std::int64_t rows = 16, cols = 64;
  const auto w = tg::test::random_floats(std::size_t(rows * cols), 3), x = tg::test::random_floats(std::size_t(cols), 4);
  tg::buffer wb = dev.borrow_host(w.data(), w.size() * 4), xb = dev.borrow_host(x.data(), x.size() * 4);
  auto run = [&](const tg::ast::kernel& k) {
    tg::buffer out = dev.allocate(std::size_t(rows) * 4);
    dev.launch(k, std::vector<tg::buffer>{out, wb, xb});
    std::vector<float> got(static_cast<std::size_t>(rows));
    out.copy_out(got.data(), got.size() * 4);
    return got;
  };
  tg::ast::kernel plain = matvec(rows, cols), lanes = plain;
  lanes.upcast = {4};
  lanes.vector_lanes = false;
  auto a = run(plain), b = run(lanes);
  tg::test::check_close(b, a, 1e-5);
  CHECK(dev.stats().compiled == 2);
  run(lanes);
  CHECK(dev.stats().compiled == 2);
}

TEST_CASE("constant_index tells integer constants from everything else") {
  if (tg::test::skip_unless_cpu("constant_index involves no device; the CPU run covers it")) return;
  tg::kernel_builder kb;
  auto i = kb.output_range(4);
  CHECK(kb.constant_index(kb.index(3)) == 3);
  CHECK(kb.constant_index(kb.constant(tg::dtype::uint32, 255)) == 255);
  CHECK_FALSE(kb.constant_index(kb.constant(2.0f)).has_value());
  CHECK_FALSE(kb.constant_index(i).has_value());
  CHECK_FALSE(kb.constant_index(i + 1).has_value());
}

}  // namespace
