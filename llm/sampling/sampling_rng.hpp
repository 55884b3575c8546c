// sampling_rng.hpp: the seeded random state a sampler draws from.
//
// std::mt19937_64's sequence is fixed by the C++ standard, and uniform() converts its output
// with our own arithmetic rather than std::uniform_real_distribution (whose algorithm is up to
// the library), so a seed gives the same draws with any standard library.
#pragma once
#include <cstdint>
#include <random>

namespace tg::sampling {

class sampling_rng {
 public:
  explicit sampling_rng(std::uint64_t seed) : engine_(seed) {}

  // Uniform in [0, 1), from the top 53 bits of one 64-bit draw.
  double uniform() { return static_cast<double>(engine_() >> 11) * 0x1.0p-53; }

 private:
  std::mt19937_64 engine_;
};

}  // namespace tg::sampling
