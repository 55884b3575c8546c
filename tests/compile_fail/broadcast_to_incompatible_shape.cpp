// expect: tg::broadcast_to: the shape does not broadcast to the target
// broadcast_to_incompatible_shape.cpp: (3) cannot broadcast to (2, 4).
#include <tg/tg.hpp>

constexpr auto x = tg::input<float>("x", tg::dims<3>);
constexpr auto y = tg::broadcast_to<tg::shape_t{2, 4}>(x);
