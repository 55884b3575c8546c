// expect: x must be a float tensor; cast<float>(x) first
// exp_of_integer.cpp: the composite exp (built on exp2) of an int32 tensor.
#include <tg/tg.hpp>

constexpr auto x = tg::input<std::int32_t>("x", tg::dims<4>);
constexpr auto y = tg::exp(x);
