// expect: tg::lower: one symbolic variable name has two ranges
// lower_symbol_two_ranges.cpp: the variable "n" is [1, 64] in one input and [1, 32] in another.
#include <tg/tg.hpp>

constexpr auto a = tg::input<float>("a", tg::dims<tg::sym<"n", 1, 64>>);
constexpr auto b = tg::input<float>("b", tg::dims<tg::sym<"n", 1, 32>>);
constexpr auto plan = tg::lower(a + b);
