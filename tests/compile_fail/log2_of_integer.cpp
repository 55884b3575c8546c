// expect: tg::log2(x): x must be a float tensor; cast<float>(x) first
// log2_of_integer.cpp: log2 of an int32 tensor.
#include <tg/tg.hpp>

constexpr auto x = tg::input<std::int32_t>("x", tg::dims<4>);
constexpr auto y = tg::log2(x);
