// main_fixtures.cpp: doctest's runner for tests that read ../shared/fixtures; without the
// fixtures the executable exits 77, which meson reports as skipped.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>
#include <cstdio>
#include "tests/support/fixtures.hpp"

int main(int argc, char** argv) {
  if (tg::test::fixtures_dir().empty()) {
    std::fprintf(stderr, "skipped: TG_FIXTURES does not name the shared fixtures folder\n");
    return 77;
  }
  doctest::Context context(argc, argv);
  return context.run();
}
