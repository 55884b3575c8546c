// launch_vars.hpp: the launch-time variables every model kernel is called with, so one
// compiled kernel serves every chunk length and position.
#pragma once
#include <array>
#include <cstdint>

namespace tg::model {

enum launch_var : int {
  var_tokens = 0,     // T: tokens in this chunk (1 .. chunk size)
  var_start_pos = 1,  // absolute position of the chunk's first token
  var_head_rows = 2,  // rows that go through the output head (1, or T for all logits)
  var_head_first = 3, // the first of them
  launch_var_count = 4,
};

using launch_values = std::array<std::int64_t, launch_var_count>;

}  // namespace tg::model
