// expect: tg::sqrt(x): x must be a float tensor; cast<float>(x) first
// sqrt_of_integer.cpp: sqrt of an int32 tensor.
#include <tg/tg.hpp>

constexpr auto x = tg::input<std::int32_t>("x", tg::dims<4>);
constexpr auto y = tg::sqrt(x);
