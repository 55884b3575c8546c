// expect: tg::input<T>: T must be one of bool, int8..int64, tg::half, tg::bfloat16, float, double
// input_unsupported_element_type.cpp: long double is not a tensor element type.
#include <tg/tg.hpp>

constexpr auto x = tg::input<long double>("x", tg::dims<4>);
