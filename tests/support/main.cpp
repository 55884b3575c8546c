// main.cpp: doctest's runner for test executables that need nothing from outside the repo.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>
