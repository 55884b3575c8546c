// error.hpp: the two kinds of failure tg reports to its callers, and a message builder.
//
// usage_error: the caller's input is wrong (bad shapes, unknown names, a corrupt model file).
// device_error: the environment failed (no device, an LLVM or libusb failure, a timeout).
// Our own bugs are TG_UNREACHABLE, never compiled out.
#pragma once
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <stdexcept>
#include <string>

namespace tg {

struct usage_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct device_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Builds a message from streamable parts: tg::str("buffer ", name, ": ", n, " bytes").
// (GCC 12 has no <format>.)
template <class... Parts>
std::string str(const Parts&... parts) {
  std::ostringstream out;
  (out << ... << parts);
  return out.str();
}

[[noreturn]] inline void unreachable(const char* what, const char* file, int line) {
  std::fprintf(stderr, "tg: internal error: %s (%s:%d)\n", what, file, line);
  std::abort();
}

}  // namespace tg

#define TG_UNREACHABLE(what) ::tg::unreachable(what, __FILE__, __LINE__)
