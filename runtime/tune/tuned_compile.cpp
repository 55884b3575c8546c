// tuned_compile.cpp: the tuner registry, the process's tuning cache and the searching program.
#include "runtime/tune/tuned_compile.hpp"

#include <atomic>
#include <cstdlib>
#include <map>
#include <mutex>
#include <optional>
#include <tg/core/error.hpp>
#include <tg/device.hpp>
#include <tg/log.hpp>
#include "runtime/tune/beam_search.hpp"
#include "runtime/tune/opts_text.hpp"
#include "runtime/tune/tuning_cache.hpp"

namespace tg::tune {
namespace {

std::map<std::string, tuner>& tuners() {
  static std::map<std::string, tuner> t;
  return t;
}

std::atomic<int> cache_hits{0}, searches{0};

// One cache per process, opened at the first kernel. Without BEAM it is only read, and a
// missing file stays missing: a run that tunes nothing creates nothing in the user's home.
tuning_cache& process_cache() {
  static tuning_cache cache(tuning_cache::default_path(),
                            beam_width() > 0 ? tuning_cache::access::read_write : tuning_cache::access::read_only);
  return cache;
}

// One search at a time in the process: two at once would time each other's candidates.
std::mutex& search_lock() {
  static std::mutex m;
  return m;
}

// The tuner of a backend name: the longest registered name that is the whole of it or a prefix
// ending at a ':' (the device registry's rule).
const tuner* tuner_of(const std::string& backend_name) {
  const tuner* found = nullptr;
  std::size_t found_length = 0;
  for (const auto& [name, t] : tuners()) {
    const bool matches = backend_name == name || (backend_name.size() > name.size() &&
                                                  backend_name.compare(0, name.size(), name) == 0 &&
                                                  backend_name[name.size()] == ':');
    if (matches && name.size() >= found_length) found = &t, found_length = name.size();
  }
  return found;
}

// Under search_lock. A runner with a device of its own is made once per target and kept; one on
// the tuned device lives for the search (`made` holds it).
candidate_runner& runner_for(const std::string& target, const tuner& t, backend& device,
                             std::unique_ptr<candidate_runner>& made) {
  if (t.runs_on_tuned_device) return *(made = t.make_runner(device));
  static std::map<std::string, std::unique_ptr<candidate_runner>> runners;
  std::unique_ptr<candidate_runner>& r = runners[target];
  if (!r) r = t.make_runner(device);
  return *r;
}

int slot_count_of(std::span<const ast::node> nodes) {
  int count = 0;
  for (const ast::node& n : nodes)
    if (n.o == ast::op::load || n.o == ast::op::store || n.o == ast::op::prefetch) count = std::max(count, int(n.arg) + 1);
  return count;
}

// Under search_lock: what the cache holds for `key` by now (another program of this AST, or
// another process, may have finished its search meanwhile), else what BEAM finds for `source`
// on `device` with `vars`, stored. nullopt when the search finds nothing or fails (a warning).
std::optional<codegen::kernel_opts> search_and_store(const tuning_key& key, const tuner& t, backend& device,
                                                     const kernel_source& source, std::span<const std::int64_t> vars) {
  std::lock_guard guard(search_lock());
  try {
    if (auto cached = process_cache().get(key)) return cached;
    ++searches;
    beam_options options;
    options.width = beam_width();
    std::unique_ptr<candidate_runner> made;
    if (auto found = beam_search(runner_for(key.target, t, device, made), source, slot_count_of(source.nodes), vars, options)) {
      process_cache().put(key, found->best, found->best_seconds);
      return found->best;
    }
  } catch (const std::exception& e) {
    log(log_level::warning, "beam: " + source.name + ": search abandoned (" + e.what() + "); the default is used");
  }
  return std::nullopt;
}

// Compiled now, searched at the first launch; afterwards every launch goes to the winner.
class searching_program final : public program {
 public:
  searching_program(std::shared_ptr<backend> owner, const kernel_source& source, tuning_key key, const tuner& t)
      : owner_(std::move(owner)), nodes_(source.nodes.begin(), source.nodes.end()),
        source_(source),
        key_(std::move(key)), tuner_(t) {
    source_.nodes = nodes_;  // the caller's span may not outlive the compile
  }

  void launch(std::span<void* const> buffers, std::span<const std::int64_t> vars) override { resolve(vars)->launch(buffers, vars); }

  // The backend's program launches go to, searched for first if no launch has been.
  const std::shared_ptr<program>& resolve(std::span<const std::int64_t> vars) {
    std::call_once(once_, [&] { chosen_ = search(vars); });
    return chosen_;
  }

 private:
  std::shared_ptr<program> search(std::span<const std::int64_t> vars) {
    try {
      if (auto opts = search_and_store(key_, tuner_, *owner_, source_, vars)) return owner_->compile(source_with(source_, *opts));
    } catch (const std::exception& e) {
      log(log_level::warning, "beam: " + source_.name + ": the tuned schedule does not compile (" + e.what() + "); the default is used");
    }
    return owner_->compile(source_);
  }

  std::shared_ptr<backend> owner_;
  std::vector<ast::node> nodes_;
  kernel_source source_;
  tuning_key key_;
  const tuner& tuner_;
  std::once_flag once_;
  std::shared_ptr<program> chosen_;
};

}  // namespace

void register_tuner(const std::string& backend_name, tuner t) { tuners()[backend_name] = std::move(t); }

int beam_width() {
  static const int width = [] {
    const char* v = std::getenv("TG_BEAM");
    if (v == nullptr || *v == '\0') return 0;
    char* end = nullptr;
    const long n = std::strtol(v, &end, 10);
    if (*end != '\0' || n < 0 || n > 64) {
      log(log_level::warning, str("tune: TG_BEAM='", v, "' is not a beam width (0..64); BEAM stays off"));
      return 0;
    }
    return int(n);
  }();
  return width;
}

std::shared_ptr<program> compile_tuned(const std::shared_ptr<backend>& owner, const kernel_source& source) {
  const tuner* found = tuner_of(owner->name());
  if (found == nullptr && beam_width() > 0) {
    static std::once_flag told;
    std::call_once(told, [&] {
      log(log_level::warning, "tune: TG_BEAM is set, but " + owner->name() + " has no BEAM runner yet; its kernels keep their default schedules");
    });
  }
  if (found == nullptr || source.global_ranges == 0) return nullptr;  // nothing to tile without output loops
  const tuner& t = *found;
  tuning_key key{ast_hash(source.nodes, source.global_ranges), t.target(*owner), opts_format_version};
  if (auto cached = process_cache().get(key)) {
    ++cache_hits;
    if (debug_level() >= 1) log(log_level::debug, "tune: " + source.name + ": cached " + to_text(*cached));
    return owner->compile(source_with(source, *cached));
  }
  if (beam_width() == 0 || !t.make_runner) return nullptr;
  return std::make_shared<searching_program>(owner, source, std::move(key), t);
}

bool tune_fused_parts(const std::shared_ptr<backend>& owner, fused_source& source) {
  const tuner* found = tuner_of(owner->name());
  if (found == nullptr) return false;
  bool tuned = false;
  for (kernel_source& part : source.parts) {
    if (part.global_ranges == 0) continue;
    tuning_key key{ast_hash(part.nodes, part.global_ranges), found->target(*owner), opts_format_version};
    std::optional<codegen::kernel_opts> opts = process_cache().get(key);
    if (opts) {
      ++cache_hits;
    } else if (beam_width() > 0 && found->make_runner) {
      opts = search_and_store(key, *found, *owner, part, {});  // a part reads no variables: specialised
    }
    if (!opts) continue;
    if (debug_level() >= 1) log(log_level::debug, "tune: " + part.name + " (a fused part): " + to_text(*opts));
    part = source_with(part, *opts);
    tuned = true;
  }
  return tuned;
}

std::shared_ptr<program> resolve_tuned(const std::shared_ptr<program>& compiled, std::span<const std::int64_t> vars) {
  if (auto* searching = dynamic_cast<searching_program*>(compiled.get())) return searching->resolve(vars);
  return compiled;
}

tune_stats stats() { return {cache_hits.load(), searches.load()}; }

}  // namespace tg::tune
