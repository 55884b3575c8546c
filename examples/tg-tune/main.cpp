// tg-tune: look at or clear the tuning cache that BEAM (TG_BEAM=n) fills.
#include <cstdio>
#include <cstring>
#include <string>
#include "runtime/tune/tuning_cache.hpp"

namespace {

constexpr const char* usage =
    "usage: tg-tune [--path | --list | --clear]\n"
    "\n"
    "The tuning cache holds the loop shape BEAM search (TG_BEAM=n) found per kernel and target, so\n"
    "later runs compile it without searching. It lives at $TG_CACHE, else\n"
    "$XDG_CACHE_HOME/tg/tuning.db, else ~/.cache/tg/tuning.db.\n"
    "\n"
    "  --path    print where the cache is (the default)\n"
    "  --list    print every entry: AST hash, target, opts, best time\n"
    "  --clear   remove every entry (a file that is not a tg tuning cache is left alone)\n"
    "  --help    this text\n";

}  // namespace

int main(int argc, char** argv) {
  const std::string command = argc > 1 ? argv[1] : "--path";
  if (argc > 2 || (command != "--path" && command != "--list" && command != "--clear" && command != "--help")) {
    std::fprintf(stderr, "error: unknown arguments\n%s", usage);
    return 2;
  }
  if (command == "--help") {
    std::fputs(usage, stdout);
    return 0;
  }
  const std::string path = tg::tune::tuning_cache::default_path();
  if (path.empty()) {
    std::fprintf(stderr, "error: no cache path: set TG_CACHE, XDG_CACHE_HOME or HOME\n");
    return 1;
  }
  if (command == "--path") {
    std::printf("%s\n", path.c_str());
    return 0;
  }
  // Read-only for --list, and for --clear too when there is no file yet: nothing to clear.
  tg::tune::tuning_cache cache(path, tg::tune::tuning_cache::access::read_only);
  if (!cache.is_usable()) {
    std::printf("%s: no tuning cache there (nothing to %s)\n", path.c_str(), command == "--list" ? "list" : "clear");
    return 0;
  }
  if (command == "--list") {
    for (const auto& e : cache.entries())
      std::printf("%016llx  %s  v%d  %s  %.3f ms\n", static_cast<unsigned long long>(e.key.ast), e.key.target.c_str(),
                  e.key.version, e.opts.c_str(), e.seconds * 1e3);
    return 0;
  }
  tg::tune::tuning_cache writable(path, tg::tune::tuning_cache::access::read_write);
  const int removed = writable.clear();
  if (removed < 0) {
    std::fprintf(stderr, "error: %s: cannot clear the tuning cache\n", path.c_str());
    return 1;
  }
  std::printf("%s: %d entries removed\n", path.c_str(), removed);
  return 0;
}
