// fuzz_gguf_driver.cpp: runs the fuzz target without libFuzzer, for CI.
//
// Mutates writer-made seeds with a fixed-seed generator for a fixed time (the sequence of
// inputs is the same on every run; how far it gets depends on the machine).
//   fuzz_gguf_driver [--seconds S]      fuzz for S seconds (default 2.5)
//   fuzz_gguf_driver --write-seeds DIR  write the seeds as files, for libFuzzer's corpus
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "tests/llm/gguf/fuzz_seeds.hpp"
#include "llm/gguf/gguf_file.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace {

// xorshift64*: small, fast, and the same everywhere.
struct rng {
  std::uint64_t state;
  std::uint64_t next() {
    state ^= state >> 12;
    state ^= state << 25;
    state ^= state >> 27;
    return state * 0x2545F4914F6CDD1Dull;
  }
  std::size_t below(std::size_t n) { return n == 0 ? 0 : static_cast<std::size_t>(next() % n); }
};

// Values that tend to cross checks: zero, one, sign bits, all ones, powers of two.
constexpr std::uint64_t interesting[] = {0, 1, 2, 3, 4, 7, 8, 12, 13, 16, 31, 32, 33, 63, 64, 255, 256,
                                         0x7FFF, 0xFFFF, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF, 1ull << 32,
                                         1ull << 62, 1ull << 63, ~0ull, 0x7FFFFFFFFFFFFFFFull};

void mutate(std::vector<std::byte>& b, const std::vector<std::vector<std::byte>>& seeds, rng& r) {
  const std::size_t steps = 1 + r.below(4);
  for (std::size_t s = 0; s < steps; ++s) {
    switch (r.below(7)) {
      case 0:  // flip a bit
        if (!b.empty()) b[r.below(b.size())] ^= static_cast<std::byte>(1u << r.below(8));
        break;
      case 1:  // set a byte
        if (!b.empty()) b[r.below(b.size())] = static_cast<std::byte>(r.next());
        break;
      case 2: {  // write an interesting little-endian value of 1, 2, 4 or 8 bytes
        const std::size_t width = std::size_t{1} << r.below(4);
        if (b.size() < width) break;
        const std::size_t at = r.below(b.size() - width + 1);
        const std::uint64_t v = interesting[r.below(std::size(interesting))];
        for (std::size_t i = 0; i < width; ++i) b[at + i] = static_cast<std::byte>(v >> (8 * i));
        break;
      }
      case 3:  // truncate
        b.resize(r.below(b.size() + 1));
        break;
      case 4: {  // delete a run
        if (b.empty()) break;
        const std::size_t at = r.below(b.size());
        const std::size_t n = 1 + r.below(std::min<std::size_t>(16, b.size() - at));
        b.erase(b.begin() + static_cast<std::ptrdiff_t>(at), b.begin() + static_cast<std::ptrdiff_t>(at + n));
        break;
      }
      case 5: {  // insert random bytes
        const std::size_t at = r.below(b.size() + 1);
        const std::size_t n = 1 + r.below(16);
        std::vector<std::byte> extra(n);
        for (auto& e : extra) e = static_cast<std::byte>(r.next());
        b.insert(b.begin() + static_cast<std::ptrdiff_t>(at), extra.begin(), extra.end());
        break;
      }
      default: {  // splice: the tail of another seed over ours
        const auto& other = seeds[r.below(seeds.size())];
        const std::size_t at = r.below(b.size() + 1);
        const std::size_t from = r.below(other.size() + 1);
        b.resize(at);
        b.insert(b.end(), other.begin() + static_cast<std::ptrdiff_t>(from), other.end());
        break;
      }
    }
  }
}

int run(const std::vector<std::vector<std::byte>>& seeds, double seconds) {
  // The seeds themselves must read cleanly, or the fuzzing starts from garbage.
  for (std::size_t i = 0; i < seeds.size(); ++i) {
    try {
      (void)tg::gguf::file::from_memory(seeds[i], "seed.gguf");
    } catch (const std::exception& e) {
      std::fprintf(stderr, "fuzz_gguf_driver: seed %zu does not read: %s\n", i, e.what());
      return 1;
    }
  }
  rng r{0x9E3779B97F4A7C15ull};
  const auto start = std::chrono::steady_clock::now();
  const auto limit = std::chrono::duration<double>(seconds);
  std::uint64_t runs = 0;
  std::vector<std::byte> input;
  while (std::chrono::steady_clock::now() - start < limit) {
    for (int batch = 0; batch < 64; ++batch, ++runs) {
      input = seeds[r.below(seeds.size())];
      mutate(input, seeds, r);
      // An exact-size heap copy, so sanitizers catch any read past the end.
      const std::unique_ptr<std::uint8_t[]> copy(new std::uint8_t[input.size()]);
      if (!input.empty()) std::memcpy(copy.get(), input.data(), input.size());
      LLVMFuzzerTestOneInput(copy.get(), input.size());
    }
  }
  std::printf("fuzz_gguf_driver: %llu inputs from %zu seeds in %.1f s, no crash\n",
              static_cast<unsigned long long>(runs), seeds.size(), seconds);
  return 0;
}

int write_seeds(const std::vector<std::vector<std::byte>>& seeds, const std::filesystem::path& dir) {
  std::filesystem::create_directories(dir);
  for (std::size_t i = 0; i < seeds.size(); ++i) {
    std::ofstream out(dir / ("seed-" + std::to_string(i) + ".gguf"), std::ios::binary);
    out.write(reinterpret_cast<const char*>(seeds[i].data()), static_cast<std::streamsize>(seeds[i].size()));
    if (!out) {
      std::fprintf(stderr, "fuzz_gguf_driver: cannot write seeds to %s\n", dir.c_str());
      return 1;
    }
  }
  std::printf("fuzz_gguf_driver: wrote %zu seeds to %s\n", seeds.size(), dir.c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const auto seeds = tg::gguf::test::fuzz_seeds();
  if (argc == 3 && std::strcmp(argv[1], "--write-seeds") == 0) return write_seeds(seeds, argv[2]);
  if (argc == 3 && std::strcmp(argv[1], "--seconds") == 0) return run(seeds, std::atof(argv[2]));
  if (argc == 1) return run(seeds, 2.5);
  std::fprintf(stderr, "usage: fuzz_gguf_driver [--seconds S | --write-seeds DIR]\n");
  return 2;
}
