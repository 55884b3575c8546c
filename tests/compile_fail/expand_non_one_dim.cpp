// expect: tg::expand: the ranks must match, and only dims of size 1 can grow
// expand_non_one_dim.cpp: (2, 3) to (2, 6): the dim 3 is not 1, so it cannot grow.
#include <tg/tg.hpp>

constexpr auto x = tg::input<float>("x", tg::dims<2, 3>);
constexpr auto y = x.expand(tg::dims<2, 6>);
