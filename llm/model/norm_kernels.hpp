// norm_kernels.hpp: RMSNorm as two kernels: a per-row scale (a reduce), then an elementwise
// apply. Rows are `rows_per_token` x T: 1 for the residual stream, the head count for the
// per-head q/k norms of qwen3.
#pragma once
#include <cstdint>

#include <tg/ast/kernel_builder.hpp>

namespace tg::model {

// s[r] = 1 / sqrt(mean_k x[r][k]^2 + eps). Slots: 0 s, 1 x.
ast::kernel rms_scale_kernel(std::int64_t rows_per_token, std::int64_t width, float eps);

// y[r][k] = x[r][k] * s[r] * w[k]. Slots: 0 y, 1 x, 2 s, 3 w (float32).
ast::kernel rms_apply_kernel(std::int64_t rows_per_token, std::int64_t width);

}  // namespace tg::model
