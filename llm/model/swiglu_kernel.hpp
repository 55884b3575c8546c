// swiglu_kernel.hpp: the SwiGLU gate of the FFN, silu(gate) * up, elementwise.
#pragma once
#include <cstdint>

#include <tg/ast/kernel_builder.hpp>

namespace tg::model {

// y[t][f] = g / (1 + exp(-g)) * u with g = gate[t][f], u = up[t][f]. Slots: 0 y, 1 gate, 2 up.
ast::kernel swiglu_kernel(std::int64_t width);

}  // namespace tg::model
