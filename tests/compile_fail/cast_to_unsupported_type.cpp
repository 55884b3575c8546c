// expect: tg::cast<T>: T must be a tensor element type
// cast_to_unsupported_type.cpp: long double is not a tensor element type.
#include <tg/tg.hpp>

constexpr auto x = tg::input<float>("x", tg::dims<4>);
constexpr auto y = x.cast<long double>();
