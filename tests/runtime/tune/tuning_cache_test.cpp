// tuning_cache_test.cpp: the SQLite tuning cache keeps what is put, for the same key only; a
// corrupt or foreign file is reported once, ignored and left byte for byte as it was; two
// processes writing at once both land; clear empties it.
#include <doctest/doctest.h>

#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include "runtime/tune/tuning_cache.hpp"
#include "tests/runtime/tune/tune_kernels.hpp"

namespace fs = std::filesystem;
using tg::tune::tuning_cache;

namespace {

// A fresh folder per test, removed afterwards.
struct temp_dir {
  fs::path path;
  temp_dir() {
    std::string tmpl = (fs::temp_directory_path() / "tg_tune_XXXXXX").string();
    path = mkdtemp(tmpl.data());
  }
  ~temp_dir() { fs::remove_all(path); }
};

std::string bytes_of(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

tg::codegen::kernel_opts opts(std::vector<int> upcast, bool lanes) {
  tg::codegen::kernel_opts o;
  o.upcast = std::move(upcast);
  o.vector_lanes = lanes;
  return o;
}

const tg::tune::tuning_key key_a{0x1234, "CPU avx2 znver3 00ff"};

}  // namespace

TEST_CASE("the tuning cache returns what was put, under the same key only") {
  temp_dir dir;
  const std::string path = (dir.path / "sub" / "tuning.db").string();  // the folder is created
  {
    tuning_cache cache(path);
    REQUIRE(cache.is_usable());
    CHECK_FALSE(cache.get(key_a).has_value());
    CHECK(cache.put(key_a, opts({4, 16}, true), 1e-3));
    CHECK(cache.put(key_a, opts({2, 8}, false), 2e-3));  // replaces
  }
  tuning_cache again(path, tuning_cache::access::read_only);  // as a later process reads it
  REQUIRE(again.is_usable());
  CHECK(again.get(key_a) == opts({2, 8}, false));
  CHECK_FALSE(again.get({key_a.ast, "gfx1100:emu"}).has_value());
  CHECK_FALSE(again.get({key_a.ast + 1, key_a.target}).has_value());
  CHECK_FALSE(again.get({key_a.ast, key_a.target, key_a.version + 1}).has_value());
  REQUIRE(again.entries().size() == 1);
  CHECK(again.entries()[0].opts == "upcast=2,8 lanes=0");
}

TEST_CASE("the default path follows TG_CACHE, then XDG_CACHE_HOME, then HOME") {
  setenv("TG_CACHE", "/x/t.db", 1);
  CHECK(tuning_cache::default_path() == "/x/t.db");
  unsetenv("TG_CACHE");
  setenv("XDG_CACHE_HOME", "/xdg", 1);
  CHECK(tuning_cache::default_path() == "/xdg/tg/tuning.db");
  unsetenv("XDG_CACHE_HOME");
  setenv("HOME", "/home/u", 1);
  CHECK(tuning_cache::default_path() == "/home/u/.cache/tg/tuning.db");
}

TEST_CASE("read-only access to a missing cache creates nothing") {
  temp_dir dir;
  tuning_cache cache((dir.path / "none" / "tuning.db").string(), tuning_cache::access::read_only);
  CHECK_FALSE(cache.is_usable());
  CHECK_FALSE(cache.get(key_a).has_value());
  CHECK_FALSE(fs::exists(dir.path / "none"));
}

TEST_CASE("a file of random bytes is reported once, ignored and left unchanged") {
  temp_dir dir;
  const fs::path path = dir.path / "tuning.db";
  {
    std::mt19937 rng(7);
    std::ofstream out(path, std::ios::binary);
    for (int i = 0; i < 8192; ++i) out.put(char(rng()));
  }
  const std::string before = bytes_of(path);
  tune_test::log_capture logged;
  for (int i = 0; i < 2; ++i) {
    tuning_cache cache(path.string());
    CHECK_FALSE(cache.is_usable());
    CHECK_FALSE(cache.get(key_a).has_value());
    CHECK_FALSE(cache.put(key_a, opts({4}, true), 1.0));
    CHECK(cache.clear() == -1);
  }
  CHECK(logged.count(path.string()) == 1);
  CHECK(logged.count("not a readable SQLite database") == 1);
  CHECK(bytes_of(path) == before);
}

TEST_CASE("another program's SQLite database is reported, ignored and left unchanged") {
  temp_dir dir;
  const fs::path path = dir.path / "tuning.db";
  SUBCASE("a foreign table") {
    sqlite3* db = nullptr;
    REQUIRE(sqlite3_open(path.c_str(), &db) == SQLITE_OK);
    REQUIRE(sqlite3_exec(db, "CREATE TABLE tuning (x INTEGER); INSERT INTO tuning VALUES (1)", nullptr, nullptr, nullptr) == SQLITE_OK);
    sqlite3_close(db);
  }
  SUBCASE("a tg cache of another schema version") {
    { tuning_cache(path.string()).put(key_a, opts({4}, true), 1.0); }
    sqlite3* db = nullptr;
    REQUIRE(sqlite3_open(path.c_str(), &db) == SQLITE_OK);
    REQUIRE(sqlite3_exec(db, "PRAGMA user_version = 99", nullptr, nullptr, nullptr) == SQLITE_OK);
    sqlite3_close(db);
  }
  const std::string before = bytes_of(path);
  tune_test::log_capture logged;
  tuning_cache cache(path.string());
  CHECK_FALSE(cache.is_usable());
  CHECK_FALSE(cache.put(key_a, opts({4}, true), 1.0));
  CHECK_FALSE(cache.get(key_a).has_value());
  CHECK(logged.count(path.string()) == 1);
  CHECK(bytes_of(path) == before);
}

TEST_CASE("two processes writing to one cache at once both land") {
  temp_dir dir;
  const std::string path = (dir.path / "tuning.db").string();
  constexpr int per_process = 150;
  pid_t children[2];
  for (int c = 0; c < 2; ++c) {
    children[c] = fork();
    REQUIRE(children[c] >= 0);
    if (children[c] == 0) {
      // Each process opens its own connection, as two tg programs would; both may create the file.
      tuning_cache cache(path);
      bool ok = cache.is_usable();
      for (int i = 0; i < per_process && ok; ++i)
        ok = cache.put({std::uint64_t(c * 1000 + i), "CPU test"}, opts({1, 1 << (i % 5)}, i % 2 == 0), i * 1e-6);
      _exit(ok ? 0 : 1);
    }
  }
  for (pid_t child : children) {
    int status = 0;
    REQUIRE(waitpid(child, &status, 0) == child);
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
  }
  tuning_cache cache(path);
  CHECK(cache.entries().size() == 2 * per_process);
  CHECK(cache.get({1000 + 7, "CPU test"}) == opts({1, 4}, false));
  CHECK(cache.clear() == 2 * per_process);
  CHECK(cache.entries().empty());
}
