// expect: tg::reciprocal(x): x must be a float tensor; cast<float>(x) first
// reciprocal_of_integer.cpp: reciprocal of an int32 tensor.
#include <tg/tg.hpp>

constexpr auto x = tg::input<std::int32_t>("x", tg::dims<4>);
constexpr auto y = tg::reciprocal(x);
