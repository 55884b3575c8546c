// expect: tg::lower: one input name is used with two shapes or dtypes
// lower_input_name_two_shapes.cpp: input "x" is (4, 1) in one place and (1, 4) in another.
#include <tg/tg.hpp>

constexpr auto a = tg::input<float>("x", tg::dims<4, 1>);
constexpr auto b = tg::input<float>("x", tg::dims<1, 4>);
constexpr auto plan = tg::lower(a + b);
