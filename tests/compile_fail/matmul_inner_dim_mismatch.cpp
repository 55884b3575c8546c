// expect: tg::matmul(a, b): a's last dim must equal b's second-to-last dim
// matmul_inner_dim_mismatch.cpp: (64, 32) @ (16, 8): the inner dims 32 and 16 differ.
#include <tg/tg.hpp>

constexpr auto a = tg::input<float>("a", tg::dims<64, 32>);
constexpr auto b = tg::input<float>("b", tg::dims<16, 8>);
constexpr auto y = tg::matmul(a, b);
