// tuning_cache.cpp: the tuning cache on SQLite. The file is recognised by its application_id and
// schema version (PRAGMAs in the header page) before anything is written to it, so a foreign or
// damaged file is never touched, and a new empty file is claimed inside one write transaction,
// so two processes creating it at once end with one schema.
#include "runtime/tune/tuning_cache.hpp"

#include <sqlite3.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <set>
#include <tg/log.hpp>
#include "runtime/tune/opts_text.hpp"

namespace tg::tune {
namespace {

// "tgtu": marks the file as a tg tuning cache (PRAGMA application_id, any 32-bit value).
constexpr int application_id = 0x74677475;
// The table's layout; a file with another value is left alone (a newer or older tg).
constexpr int schema_version = 1;
// How long a writer waits for another process's transaction before giving up on one entry.
constexpr int busy_timeout_ms = 5000;

constexpr const char* create_table =
    "CREATE TABLE tuning (ast_hash TEXT NOT NULL, target TEXT NOT NULL, opts_version INTEGER NOT NULL,"
    " opts TEXT NOT NULL, seconds REAL NOT NULL, PRIMARY KEY (ast_hash, target, opts_version))";

std::string hex(std::uint64_t v) {
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(v));
  return text;
}

// One prepared statement, finalized on every path out.
struct statement {
  sqlite3_stmt* s = nullptr;
  statement(sqlite3* db, const char* sql) { sqlite3_prepare_v2(db, sql, -1, &s, nullptr); }
  ~statement() { sqlite3_finalize(s); }
  explicit operator bool() const { return s != nullptr; }
};

// The single integer a PRAGMA or count query answers; nullopt on any error (SQLITE_NOTADB for a
// file of random bytes).
std::optional<std::int64_t> query_int(sqlite3* db, const char* sql) {
  statement st(db, sql);
  if (!st || sqlite3_step(st.s) != SQLITE_ROW) return std::nullopt;
  return sqlite3_column_int64(st.s, 0);
}

bool exec(sqlite3* db, const char* sql) { return sqlite3_exec(db, sql, nullptr, nullptr, nullptr) == SQLITE_OK; }

}  // namespace

std::string tuning_cache::default_path() {
  if (const char* p = std::getenv("TG_CACHE"); p && *p) return p;
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) return std::string(x) + "/tg/tuning.db";
  if (const char* h = std::getenv("HOME"); h && *h) return std::string(h) + "/.cache/tg/tuning.db";
  return "";
}

tuning_cache::tuning_cache(std::string path, access mode) : path_(std::move(path)) {
  if (!path_.empty() && !open(mode) && db_) {
    sqlite3_close(db_);
    db_ = nullptr;
  }
}

tuning_cache::~tuning_cache() { sqlite3_close(db_); }

// Once per file and process: a cache opened again by a later device must not repeat it.
void tuning_cache::report(const std::string& what) {
  static std::mutex reported_lock;
  static std::set<std::string> reported;
  std::lock_guard guard(reported_lock);
  if (reported.insert(path_).second)
    log(log_level::warning, "tune: " + path_ + ": " + what + "; tuning cache ignored (delete the file or point TG_CACHE elsewhere)");
}

bool tuning_cache::open(access mode) {
  std::error_code ec;
  const bool exists = std::filesystem::exists(path_, ec);
  if (mode == access::read_only && !exists) return false;  // nothing tuned yet: a quiet miss
  if (mode == access::read_write && !exists) {
    std::filesystem::path folder = std::filesystem::path(path_).parent_path();
    if (!folder.empty() && !std::filesystem::create_directories(folder, ec) && ec) {
      report("cannot create the folder (" + ec.message() + ")");
      return false;
    }
  }
  const int flags = mode == access::read_only ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE;
  if (sqlite3_open_v2(path_.c_str(), &db_, flags | SQLITE_OPEN_FULLMUTEX, nullptr) != SQLITE_OK) {
    report(std::string("cannot open (") + (db_ ? sqlite3_errmsg(db_) : "out of memory") + ")");
    return false;
  }
  sqlite3_busy_timeout(db_, busy_timeout_ms);
  // Only reads until the file is known to be ours: these touch nothing on disk. One read
  // transaction, so another process claiming the file in between is seen whole or not at all.
  exec(db_, "BEGIN");
  auto id = query_int(db_, "PRAGMA application_id");
  auto version = query_int(db_, "PRAGMA user_version");
  auto tables = query_int(db_, "SELECT count(*) FROM sqlite_master");
  exec(db_, "COMMIT");
  if (!id || !version || !tables) {
    report(std::string("not a readable SQLite database (") + sqlite3_errmsg(db_) + ")");
    return false;
  }
  const bool empty = *id == 0 && *tables == 0;
  if (!empty && *id != application_id) {
    report("an SQLite database of another program (application_id " + std::to_string(*id) + ")");
    return false;
  }
  if (empty && mode == access::read_only) return false;
  if (empty) {
    // Claim it in one write transaction; a process that got there first leaves it ours already.
    if (!exec(db_, "BEGIN IMMEDIATE")) {
      report(std::string("cannot lock it to create the table (") + sqlite3_errmsg(db_) + ")");
      return false;
    }
    bool ok = true;
    if (query_int(db_, "SELECT count(*) FROM sqlite_master").value_or(-1) == 0)
      ok = exec(db_, create_table) && exec(db_, ("PRAGMA application_id = " + std::to_string(application_id)).c_str()) &&
           exec(db_, ("PRAGMA user_version = " + std::to_string(schema_version)).c_str());
    if (!ok || !exec(db_, "COMMIT")) {
      report(std::string("cannot create the table (") + sqlite3_errmsg(db_) + ")");
      exec(db_, "ROLLBACK");
      return false;
    }
    id = query_int(db_, "PRAGMA application_id");
    version = query_int(db_, "PRAGMA user_version");
    if (id != application_id) {
      report("another program claimed the new file first");
      return false;
    }
  }
  if (version.value_or(-1) != schema_version) {
    report("a tg tuning cache of schema version " + std::to_string(version.value_or(-1)) + ", this tg reads version " +
           std::to_string(schema_version));
    return false;
  }
  // The schema is also checked by using it: a table someone altered fails here, not on a put.
  if (!statement(db_, "SELECT ast_hash, target, opts_version, opts, seconds FROM tuning LIMIT 0")) {
    report(std::string("the tuning table has another layout (") + sqlite3_errmsg(db_) + ")");
    return false;
  }
  // WAL: readers never wait for a writer. A failure (a filesystem without shared memory) leaves
  // the rollback journal, which is slower under contention but as safe.
  if (mode == access::read_write) exec(db_, "PRAGMA journal_mode = WAL");
  return true;
}

std::optional<codegen::kernel_opts> tuning_cache::get(const tuning_key& key) {
  std::lock_guard guard(lock_);
  if (!db_) return std::nullopt;
  statement st(db_, "SELECT opts FROM tuning WHERE ast_hash = ?1 AND target = ?2 AND opts_version = ?3");
  if (!st) return std::nullopt;
  const std::string h = hex(key.ast);
  sqlite3_bind_text(st.s, 1, h.c_str(), -1, SQLITE_TRANSIENT);
  sqlite3_bind_text(st.s, 2, key.target.c_str(), -1, SQLITE_TRANSIENT);
  sqlite3_bind_int(st.s, 3, key.version);
  if (sqlite3_step(st.s) != SQLITE_ROW) return std::nullopt;
  const unsigned char* text = sqlite3_column_text(st.s, 0);
  std::optional<codegen::kernel_opts> opts = parse_opts(text ? reinterpret_cast<const char*>(text) : "");
  if (!opts) log(log_level::warning, "tune: " + path_ + ": entry " + h + " holds unreadable opts; ignored");
  return opts;
}

bool tuning_cache::put(const tuning_key& key, const codegen::kernel_opts& opts, double seconds) {
  std::lock_guard guard(lock_);
  if (!db_) return false;
  statement st(db_, "INSERT OR REPLACE INTO tuning (ast_hash, target, opts_version, opts, seconds) VALUES (?1, ?2, ?3, ?4, ?5)");
  if (!st) return false;
  const std::string h = hex(key.ast), text = to_text(opts);
  sqlite3_bind_text(st.s, 1, h.c_str(), -1, SQLITE_TRANSIENT);
  sqlite3_bind_text(st.s, 2, key.target.c_str(), -1, SQLITE_TRANSIENT);
  sqlite3_bind_int(st.s, 3, key.version);
  sqlite3_bind_text(st.s, 4, text.c_str(), -1, SQLITE_TRANSIENT);
  sqlite3_bind_double(st.s, 5, seconds);
  if (sqlite3_step(st.s) == SQLITE_DONE) return true;
  log(log_level::warning, "tune: " + path_ + ": cannot store entry " + h + " (" + sqlite3_errmsg(db_) + ")");
  return false;
}

int tuning_cache::clear() {
  std::lock_guard guard(lock_);
  if (!db_ || !exec(db_, "DELETE FROM tuning")) return -1;
  return sqlite3_changes(db_);
}

std::vector<tuning_cache::entry> tuning_cache::entries() {
  std::lock_guard guard(lock_);
  std::vector<entry> out;
  if (!db_) return out;
  statement st(db_, "SELECT ast_hash, target, opts_version, opts, seconds FROM tuning ORDER BY target, ast_hash");
  while (st && sqlite3_step(st.s) == SQLITE_ROW) {
    auto text = [&](int column) {
      const unsigned char* t = sqlite3_column_text(st.s, column);
      return std::string(t ? reinterpret_cast<const char*>(t) : "");
    };
    entry e;
    e.key.ast = std::strtoull(text(0).c_str(), nullptr, 16);
    e.key.target = text(1);
    e.key.version = sqlite3_column_int(st.s, 2);
    e.opts = text(3);
    e.seconds = sqlite3_column_double(st.s, 4);
    out.push_back(std::move(e));
  }
  return out;
}

}  // namespace tg::tune
