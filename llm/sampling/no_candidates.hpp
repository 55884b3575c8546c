// no_candidates.hpp: the checks every sampler makes on its logits, with one wording (internal).
#pragma once
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string_view>

#include <tg/core/error.hpp>

namespace tg::sampling {

// Token ids are int32, so a vocabulary must be non-empty and fit in one.
inline void check_vocabulary_size(std::size_t n) {
  if (n == 0) throw usage_error("sampling: the logits are empty (vocabulary of 0 tokens)");
  if (n > static_cast<std::size_t>(std::numeric_limits<std::int32_t>::max()))
    throw usage_error(str("sampling: ", n, " logits are more than int32 token ids can index"));
}

[[noreturn]] inline void throw_no_candidates(std::string_view op, std::size_t n) {
  throw usage_error(str(op, ": all ", n, " logits are NaN or -inf, so no token can be sampled (did the forward pass overflow?)"));
}

}  // namespace tg::sampling
