// beam_search.hpp: BEAM for one kernel: time the default loop shape, then rounds of neighbours
// (candidates.hpp) of the `width` fastest so far, until a round brings nothing faster. Every
// candidate runs through a candidate_runner on stand-in buffers of the kernel's real sizes, and
// counts only when it writes what the default writes; one that does not compile, crashes, hangs
// or computes something else is skipped (logged at TG_DEBUG=1) and the search goes on.
//
//   tg::tune::fork_runner runner(tg::device("CPU", {.threads = 1}), defaults);
//   auto found = tg::tune::beam_search(runner, source, kernel.slot_count, vars, {.width = 2});
#pragma once
#include <chrono>
#include <optional>
#include <span>
#include "runtime/tune/candidate_runner.hpp"

namespace tg::tune {

struct beam_options {
  int width = 1;       // TG_BEAM=n: how many of the fastest are expanded each round
  int max_rounds = 4;  // each round moves a factor of 2-4 on one range: 4 reach any tile from the default
  std::chrono::milliseconds timeout{0};  // per candidate run; 0: 2 s plus 100 times the default's time
  worker_hook in_worker;  // tests only (candidate_runner.hpp)
};

struct beam_result {
  codegen::kernel_opts best;  // normalized (candidates.hpp); the default's when nothing beat it
  double best_seconds = 0, default_seconds = 0;
  bool is_default = true;
  int tried = 0, skipped = 0;  // candidates timed or skipped, the default included
};

// nullopt when the kernel cannot be searched: its buffers cannot be sized from its indexes, or
// the default itself fails on the stand-ins. The reason is logged at TG_DEBUG=1.
std::optional<beam_result> beam_search(candidate_runner& runner, const kernel_source& source, int slot_count,
                                       std::span<const std::int64_t> vars, const beam_options& options);

// True when every written slot of `got` equals `want`: integers exactly, floats within a
// tolerance that allows another summation order; otherwise `why` says where they differ.
bool outputs_match(std::span<const slot_info> slots, const std::vector<std::vector<std::byte>>& want,
                   const std::vector<std::vector<std::byte>>& got, std::string& why);

}  // namespace tg::tune
