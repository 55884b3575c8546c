// fixtures.hpp: where the shared test fixtures (../shared/fixtures) are, for tests that read them.
#pragma once
#include <cstdlib>
#include <filesystem>
#include <string>

namespace tg::test {

// The fixtures folder from TG_FIXTURES (set by meson), or "" when it is not there.
inline std::filesystem::path fixtures_dir() {
  const char* dir = std::getenv("TG_FIXTURES");
  if (dir == nullptr || !std::filesystem::is_directory(dir)) return {};
  return dir;
}

inline std::filesystem::path fixture(const std::string& relative) { return fixtures_dir() / relative; }

}  // namespace tg::test
