// expect: tg::dims: every dim must be >= 1
#include <tg/tg.hpp>

constexpr auto x = tg::input<float>("x", tg::dims<4, 0>);
