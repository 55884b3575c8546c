// reference.hpp: plain C++ helpers the DSL tests compare against: random data with the
// awkward values mixed in, row-major index helpers, a NaN-aware comparison, and the device the
// tests run on.
//
// The device is TG_TEST_DEVICE ("CPU" when unset; tests/dsl/meson.build registers each test
// again with AMD:EMU:gfx11, AMD:EMU:gfx12 and AMD:EMU:usb), opened once per process on first use:
// booting the emulated GPU takes a while. A case that cannot run on a GPU (a CPU-only feature)
// returns early through skip_unless_cpu, which says so in the test output.
#pragma once
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <random>
#include <string>
#include <tg/device.hpp>
#include <vector>

namespace tg::test {

inline const std::string& test_device_name() {
  static const std::string name = [] {
    const char* v = std::getenv("TG_TEST_DEVICE");
    return std::string(v != nullptr && *v != '\0' ? v : "CPU");
  }();
  return name;
}

inline bool testing_on_cpu() { return test_device_name() == "CPU"; }

// The CPU, for tests that compare another device against it (amd_emu_test.cpp).
inline tg::device& cpu() {
  static tg::device d("CPU");
  return d;
}

// The device under test.
inline tg::device& test_device() {
  static tg::device d(test_device_name());
  return d;
}

// True (and a message naming the reason) when the device under test is not the CPU.
inline bool skip_unless_cpu(const char* reason) {
  if (testing_on_cpu()) return false;
  const std::string why = "skipped on " + test_device_name() + ": " + reason;
  MESSAGE(why);
  return true;
}

// Normal values, some negative; with `specials`, also NaN, +-inf and zeros sprinkled in.
inline std::vector<float> random_floats(std::size_t n, std::uint32_t seed, bool specials = false) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 2.0f);
  std::vector<float> v(n);
  for (float& x : v) x = normal(rng);
  if (specials && n >= 4) {
    const float odd[] = {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity(),
                         -std::numeric_limits<float>::infinity(), 0.0f};
    for (std::size_t i = 0; i < 4; ++i) v[(i * 7919 + seed) % n] = odd[i];
  }
  return v;
}

template <class T>
std::vector<T> random_ints(std::size_t n, std::uint32_t seed, int lo, int hi) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> d(lo, hi);
  std::vector<T> v(n);
  for (T& x : v) x = T(d(rng));
  return v;
}

// The flat index in a row-major array of `shape` of a multi-index `at`, where dims of size 1
// broadcast (numpy: `at` has the result's rank; shape is aligned to its right).
inline std::size_t broadcast_index(const std::vector<std::int64_t>& shape, const std::vector<std::int64_t>& at) {
  std::size_t flat = 0, offset = at.size() - shape.size();
  for (std::size_t i = 0; i < shape.size(); ++i) {
    std::int64_t idx = shape[i] == 1 ? 0 : at[i + offset];
    flat = flat * std::size_t(shape[i]) + std::size_t(idx);
  }
  return flat;
}

// Every multi-index of a shape, in row-major order.
template <class F>
void for_each_index(const std::vector<std::int64_t>& shape, F f) {
  std::int64_t total = 1;
  for (auto d : shape) total *= d;
  std::vector<std::int64_t> at(shape.size(), 0);
  for (std::int64_t n = 0; n < total; ++n) {
    f(at);
    for (std::size_t i = shape.size(); i-- > 0;) {
      if (++at[i] < shape[i]) break;
      at[i] = 0;
    }
  }
}

// Equal within a tolerance relative to 1 + |want|; NaN equals NaN; infinities must match exactly.
//
// The tolerances the tests pass hold on every device: 1e-5 (about 84 ULP at 1.0) is well above
// the error of the instructions a GPU kernel's transcendentals end in: v_exp_f32, v_log_f32,
// v_rcp_f32, v_rsq_f32 and v_sqrt_f32 within 1 ULP, v_sin_f32 / v_cos_f32 within 2^-20 absolute
// (the bounds the emulated GPU holds them to, drivers/emu/shader/transcendental.hpp; AMD's RDNA3
// ISA reference guide, "Vector ALU Operations", gives no tighter figure). Integer and movement
// results are compared with tolerance 0 (exact).
inline bool close(double got, double want, double tol) {
  if (std::isnan(want)) return std::isnan(got);
  if (std::isinf(want)) return got == want;
  return std::abs(got - want) <= tol * (1.0 + std::abs(want));
}

template <class T, class U>
void check_close(const std::vector<T>& got, const std::vector<U>& want, double tol = 1e-5) {
  REQUIRE(got.size() == want.size());
  int bad = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    if (close(double(got[i]), double(want[i]), tol)) continue;
    if (++bad <= 5) FAIL_CHECK("element " << i << ": got " << double(got[i]) << ", want " << double(want[i]));
  }
  CHECK(bad == 0);
}

}  // namespace tg::test
