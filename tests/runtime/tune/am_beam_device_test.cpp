// am_beam_device_test.cpp: TG_BEAM on a card, as a user turns it on (TG_BEAM=2, TG_CACHE). The
// card is the emulated GPU under the "AMD" backend's name ("AMD:TESTCARD", registered here), so
// it takes the real card's tuner (drivers/amd/am_tuning.cpp): the first launch of a matvec
// searches on the card itself, stores the winner under the card's target, a second device of that
// card compiles it without searching, and AMD:EMU (another target) is not served it.
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include "drivers/amd/am_candidate_runner.hpp"
#include "drivers/emu/emu_device.hpp"
#include "drivers/emu/machine/emulated_machine.hpp"
#include "runtime/transport/open_transport.hpp"
#include "runtime/tune/tuned_compile.hpp"
#include "runtime/tune/tuning_cache.hpp"
#include "tests/runtime/tune/tune_kernels.hpp"

namespace fs = std::filesystem;

namespace {

constexpr std::int64_t rows = 128, cols = 256;

std::shared_ptr<tg::emu::emulated_machine> card_machine;
const tg::backend_registration test_card("TESTCARD", [](const std::string&, const tg::device_options&) {
  auto m = std::make_shared<tg::emu::emulated_machine>(tg::emu::emulated_machine_config{});
  card_machine = m;
  tg::amd::am_options o;
  o.firmware_dir = m->firmware_dir();
  return std::shared_ptr<tg::backend>(
      std::make_shared<tg::amd::am_backend>("AMD:TESTCARD", tg::transport::open_transport("AMD", m->buses()), o, m));
});


}  // namespace

TEST_CASE("TG_BEAM on a card searches on that card, caches under its target, and serves that target only") {
  std::string folder = (fs::temp_directory_path() / "tg_card_beam_XXXXXX").string();
  REQUIRE(mkdtemp(folder.data()) != nullptr);
  const std::string path = folder + "/tuning.db";
  setenv("TG_CACHE", path.c_str(), 1);  // before the first kernel compiles: read once per process
  setenv("TG_BEAM", "2", 1);
  tg::kernel_builder kb;
  auto i = kb.output_range(rows);
  auto r = kb.reduce_range(cols);
  kb.store(0, i, kb.sum(kb.load<float>(1, i * cols + r) * kb.load<float>(2, r), r));
  const tg::ast::kernel kernel = kb.finish();
  const auto want = tune_test::reference_matmul(tune_test::pattern(rows * cols, 1), tune_test::pattern(cols, 2), rows, 1, cols);
  std::string target;
  {
    tg::device card("TESTCARD");
    target = tg::amd::card_tuning_target(dynamic_cast<tg::amd::am_backend&>(card.impl()));
    const std::uint64_t before = card_machine->device().stats().dispatches;
    CHECK(tune_test::run_matmul(card, kernel, rows, 1, cols) == want);
    // The search ran its candidates on the card: many dispatches for one launch.
    CHECK(card_machine->device().stats().dispatches - before > 10);
    CHECK(card_machine->device().faults().empty());
  }
  CHECK(tg::tune::stats().searches == 1);
  tg::tune::tuning_cache cache(path, tg::tune::tuning_cache::access::read_only);
  REQUIRE(cache.entries().size() == 1);
  CHECK(cache.entries()[0].key.target == target);
  CHECK(cache.entries()[0].opts.find("group=") != std::string::npos);  // a GPU schedule
  MESSAGE("cached for " << target << ": " << cache.entries()[0].opts << " (" << cache.entries()[0].seconds * 1e6
                        << " us by the emulated GPU's timestamps)");
  {
    tg::device again("TESTCARD");
    const std::uint64_t before = card_machine->device().stats().dispatches;
    CHECK(tune_test::run_matmul(again, kernel, rows, 1, cols) == want);
    CHECK(card_machine->device().stats().dispatches - before == 1);  // the cached schedule, no search
  }
  CHECK(tg::tune::stats().searches == 1);
  CHECK(tg::tune::stats().cache_hits == 1);
  {
    tg::device emulated("AMD:EMU");  // the emulated target: searched for itself, on its own runner
    CHECK(tune_test::run_matmul(emulated, kernel, rows, 1, cols) == want);
  }
  CHECK(tg::tune::stats().searches == 2);
  tg::tune::tuning_cache after(path, tg::tune::tuning_cache::access::read_only);
  CHECK(after.entries().size() == 2);
  fs::remove_all(folder);
}
