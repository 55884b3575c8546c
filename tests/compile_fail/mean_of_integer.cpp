// expect: tg::mean(x): x must be a float tensor; cast<float>(x) first
#include <tg/tg.hpp>

constexpr auto x = tg::input<int>("x", tg::dims<4, 6>);
constexpr auto plan = tg::lower(tg::mean(x, tg::axis<1>));
