// tuning_cache.hpp: the on-disk tuning cache, an SQLite file that remembers the loop shape BEAM
// found per (kernel AST, target, opts version), so a later run compiles it without searching.
//
//   tg::tune::tuning_cache cache(tg::tune::tuning_cache::default_path());
//   cache.put(key, opts, seconds);
//   std::optional<tg::codegen::kernel_opts> hit = cache.get(key);
//
// Several processes may share the file (WAL journal, a busy timeout). A file that is not a
// tg tuning cache (not SQLite at all, or another program's database, or another schema
// version) is reported once with a warning naming it and then left alone: never read, never
// written, never replaced. Nothing here throws; a failure is a warning and a miss.
#pragma once
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>
#include "runtime/codegen/llvm_kernel.hpp"
#include "runtime/tune/ast_hash.hpp"

struct sqlite3;

namespace tg::tune {

class tuning_cache {
 public:
  // read_only never creates the file or its folder (for runs without BEAM: a missing file is a miss).
  enum class access { read_only, read_write };
  explicit tuning_cache(std::string path, access mode = access::read_write);
  ~tuning_cache();
  tuning_cache(const tuning_cache&) = delete;
  tuning_cache& operator=(const tuning_cache&) = delete;

  // $TG_CACHE, else $XDG_CACHE_HOME/tg/tuning.db, else ~/.cache/tg/tuning.db ("" without HOME).
  static std::string default_path();

  const std::string& path() const { return path_; }
  // False when the file is missing (read_only), unreadable, corrupt or foreign.
  bool is_usable() const { return db_ != nullptr; }

  std::optional<codegen::kernel_opts> get(const tuning_key& key);
  // Replaces an entry for the same key; false when the cache is unusable or the write failed.
  bool put(const tuning_key& key, const codegen::kernel_opts& opts, double seconds);
  // Removes every entry; the number removed, or -1 when the cache is unusable.
  int clear();

  struct entry {
    tuning_key key;
    std::string opts;  // opts_text.hpp's form
    double seconds = 0;
  };
  std::vector<entry> entries();

 private:
  bool open(access mode);
  void report(const std::string& what);

  std::string path_;
  sqlite3* db_ = nullptr;
  std::mutex lock_;
};

}  // namespace tg::tune
