// expect: tg::expand: the ranks must match, and only dims of size 1 can grow
// expand_rank_mismatch.cpp: (1, 3) to (4, 1, 3): expand keeps the rank (broadcast_to adds dims).
#include <tg/tg.hpp>

constexpr auto x = tg::input<float>("x", tg::dims<1, 3>);
constexpr auto y = x.expand(tg::dims<4, 1, 3>);
