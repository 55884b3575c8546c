// expect: tg::matmul(a, b): a needs 1 to 7 dims and b 2 to 7
// matmul_rhs_rank_one.cpp: (4, 8) @ (8): b must be a matrix (or a batch of them).
#include <tg/tg.hpp>

constexpr auto a = tg::input<float>("a", tg::dims<4, 8>);
constexpr auto b = tg::input<float>("b", tg::dims<8>);
constexpr auto y = tg::matmul(a, b);
