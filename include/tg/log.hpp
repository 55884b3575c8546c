// log.hpp: where tg's messages go. The runtime, the drivers and the LLM library never print:
// they hand each line, with a level, to one process-wide callback, which by default writes
// it to stderr. A program that wants the messages elsewhere (a UI, a log file, nowhere)
// sets its own.
//
//   tg::set_log_callback([](tg::log_level level, std::string_view line) {
//     if (level <= tg::log_level::warning) my_log << line << "\n";
//   });
#pragma once
#include <functional>
#include <string_view>

namespace tg {

// Ordered by severity: a callback filters with `level <= log_level::info`.
enum class log_level { error, warning, info, debug };

// One line, without its newline; prefixed by its subsystem ("jit: compiled E_64 in 3.1 ms").
using log_callback = std::function<void(log_level level, std::string_view line)>;

// Replaces the callback for the whole process; an empty one restores the default (stderr).
// Thread-safe. The callback runs under a lock, one line at a time: it must not call tg::log.
void set_log_callback(log_callback callback);

// Sends one line to the callback. Thread-safe: lines from different threads never interleave.
void log(log_level level, std::string_view line);

}  // namespace tg
