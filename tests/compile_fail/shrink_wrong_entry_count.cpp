// expect: tg::shrink: give one begin and one end per axis
// shrink_wrong_entry_count.cpp: a matrix shrunk with one begin and one end.
#include <tg/tg.hpp>

constexpr auto x = tg::input<float>("x", tg::dims<4, 4>);
constexpr auto y = x.shrink(tg::begin<1>, tg::end<3>);
