// expect: tg::where(cond, a, b): the three shapes do not broadcast together
// where_shapes_do_not_broadcast.cpp: a (4, 3) and b (4, 5) under a (4, 1) condition.
#include <tg/tg.hpp>

constexpr auto c = tg::input<bool>("c", tg::dims<4, 1>);
constexpr auto a = tg::input<float>("a", tg::dims<4, 3>);
constexpr auto b = tg::input<float>("b", tg::dims<4, 5>);
constexpr auto y = tg::where(c, a, b);
