// expect: tg::sin(x): x must be a float tensor; cast<float>(x) first
// sin_of_integer.cpp: sin of an int32 tensor.
#include <tg/tg.hpp>

constexpr auto x = tg::input<std::int32_t>("x", tg::dims<4>);
constexpr auto y = tg::sin(x);
