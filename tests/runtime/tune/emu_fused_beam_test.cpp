// emu_fused_beam_test.cpp: BEAM and the tuning cache for the parts of a fused launch
// (device::prepare_fused, tune_fused_parts in runtime/tune/tuned_compile.hpp), on AMD:EMU with
// TG_BEAM=2 and a TG_CACHE of its own: preparing two matvecs as one launch takes the schedule the
// cache holds for one part (planted there: 8 work-items an output, not the default's 32) and
// searches the other as a kernel of its own, storing it; the launch computes what a plain
// reference computes; a second device compiles both parts from the cache, searching nothing.
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include "runtime/tune/ast_hash.hpp"
#include "runtime/tune/opts_text.hpp"
#include "runtime/tune/tuned_compile.hpp"
#include "runtime/tune/tuning_cache.hpp"
#include "tests/runtime/tune/tune_kernels.hpp"

namespace fs = std::filesystem;

namespace {

constexpr std::int64_t cols = 256, rows_a = 192, rows_b = 64;

// out[r] = sum_c m[r][c] * x[c]: slots out, m, x.
tg::ast::kernel matvec(std::int64_t rows) {
  tg::kernel_builder kb;
  auto r = kb.output_range(rows);
  auto c = kb.reduce_range(cols);
  kb.store(0, r, kb.sum(kb.load<float>(1, r * cols + c) * kb.load<float>(2, c), c));
  return kb.finish();
}

// Both matvecs as one launch on `dev`; each output against the reference. Returns how the
// backend describes the launch (each part's schedule).
std::string check_fused_matvecs(tg::device& dev) {
  const tg::ast::kernel a = matvec(rows_a), b = matvec(rows_b);
  const tg::ast::kernel* parts[] = {&a, &b};
  tg::prepared_kernel fused = dev.prepare_fused(parts, {});
  REQUIRE(fused);
  const auto ma = tune_test::pattern(rows_a * cols, 1), mb = tune_test::pattern(rows_b * cols, 3), x = tune_test::pattern(cols, 2);
  tg::buffer oa = dev.allocate(rows_a * 4), ob = dev.allocate(rows_b * 4), xa = dev.allocate(cols * 4), xb = dev.allocate(cols * 4);
  tg::buffer wa = dev.allocate(ma.size() * 4), wb = dev.allocate(mb.size() * 4);
  wa.copy_in(ma.data(), ma.size() * 4);
  wb.copy_in(mb.data(), mb.size() * 4);
  xa.copy_in(x.data(), x.size() * 4);
  xb.copy_in(x.data(), x.size() * 4);
  fused.launch(std::vector<tg::buffer>{oa, wa, xa, ob, wb, xb});
  std::vector<float> got_a(rows_a), got_b(rows_b);
  oa.copy_out(got_a.data(), got_a.size() * 4);
  ob.copy_out(got_b.data(), got_b.size() * 4);
  CHECK(got_a == tune_test::reference_matmul(ma, x, rows_a, 1, cols));
  CHECK(got_b == tune_test::reference_matmul(mb, x, rows_b, 1, cols));
  return fused.describe();
}

}  // namespace

TEST_CASE("a fused launch's parts are searched as kernels of their own, cached, and served from the cache") {
  std::string folder = (fs::temp_directory_path() / "tg_fused_beam_XXXXXX").string();
  REQUIRE(mkdtemp(folder.data()) != nullptr);
  const std::string path = folder + "/tuning.db";
  setenv("TG_CACHE", path.c_str(), 1);  // before the first kernel compiles: read once per process
  setenv("TG_BEAM", "2", 1);
  const tg::ast::kernel b = matvec(rows_b);
  const auto planted = tg::tune::parse_opts("upcast=1 lanes=0 group=8 unroll=2");
  REQUIRE(planted.has_value());
  {
    tg::tune::tuning_cache seed(path, tg::tune::tuning_cache::access::read_write);
    REQUIRE(seed.put({tg::tune::ast_hash(b.nodes, b.global_ranges), "AMD:EMU gfx1100 modeled RX 7900 XTX",
                      tg::tune::opts_format_version},
                     *planted, 1e-6));
  }
  tune_test::log_capture logged;
  std::string described;
  {
    tg::device dev("AMD:EMU");
    described = check_fused_matvecs(dev);
  }
  MESSAGE(described);
  CHECK(described.find("fused: ") != std::string::npos);
  CHECK(described.find("| 8 work-items per output") != std::string::npos);  // part b: the planted schedule
  CHECK(tg::tune::stats().searches == 1);  // part a only
  CHECK(tg::tune::stats().cache_hits == 1);
  CHECK(logged.count("beam: r_192_256: ") >= 1);
  CHECK(logged.count("beam: r_64_256: ") == 0);
  tg::tune::tuning_cache cache(path, tg::tune::tuning_cache::access::read_only);
  REQUIRE(cache.entries().size() == 2);
  for (const auto& e : cache.entries()) {
    CHECK(e.key.target == "AMD:EMU gfx1100 modeled RX 7900 XTX");
    MESSAGE("cached part: " << e.opts << " (" << e.seconds * 1e6 << " us)");
  }
  {
    tg::device again("AMD:EMU");
    CHECK(check_fused_matvecs(again) == described);
  }
  CHECK(tg::tune::stats().searches == 1);
  CHECK(tg::tune::stats().cache_hits == 3);
  fs::remove_all(folder);
}
