// expect: tg::reshape: the new shape must have as many elements as the old one
// reshape_element_count_differs.cpp: (4, 8) has 32 elements, (5, 6) has 30.
#include <tg/tg.hpp>

constexpr auto x = tg::input<float>("x", tg::dims<4, 8>);
constexpr auto y = x.reshape(tg::dims<5, 6>);
