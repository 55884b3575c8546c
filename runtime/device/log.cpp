// log.cpp: the process-wide log callback, stderr by default.
#include <tg/log.hpp>

#include <cstdio>
#include <mutex>
#include <string>

namespace tg {
namespace {

std::mutex& log_mutex() {
  static std::mutex m;
  return m;
}

log_callback& current_callback() {
  static log_callback callback;
  return callback;
}

}  // namespace

void set_log_callback(log_callback callback) {
  std::lock_guard lock(log_mutex());
  current_callback() = std::move(callback);
}

void log(log_level level, std::string_view line) {
  std::lock_guard lock(log_mutex());  // one line at a time, and a callback is never replaced mid-call
  if (const log_callback& callback = current_callback()) {
    callback(level, line);
    return;
  }
  std::fprintf(stderr, "%.*s\n", int(line.size()), line.data());
}

}  // namespace tg
