// expect: tg::dims: at most 8 dimensions
// input_too_many_dims.cpp: a 9-dimensional input.
#include <tg/tg.hpp>

constexpr auto x = tg::input<float>("x", tg::dims<1, 1, 1, 1, 1, 1, 1, 1, 1>);
