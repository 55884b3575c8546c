// expect: tg::transpose: the tensor must be a matrix; use permute<...>() otherwise
// transpose_not_matrix.cpp: transpose of a rank-3 tensor.
#include <tg/tg.hpp>

constexpr auto x = tg::input<float>("x", tg::dims<2, 3, 4>);
constexpr auto y = tg::transpose(x);
