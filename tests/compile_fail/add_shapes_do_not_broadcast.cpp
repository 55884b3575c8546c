// expect: tg: elementwise op on tensors whose shapes do not broadcast
// add_shapes_do_not_broadcast.cpp: (4, 3) + (4, 5): the last dims differ and neither is 1.
#include <tg/tg.hpp>

constexpr auto a = tg::input<float>("a", tg::dims<4, 3>);
constexpr auto b = tg::input<float>("b", tg::dims<4, 5>);
constexpr auto y = a + b;
