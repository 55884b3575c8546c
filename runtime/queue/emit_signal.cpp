// emit_signal.cpp: signal packets (see emit_signal.hpp).
#include "runtime/queue/emit_signal.hpp"

namespace tg::queue {
namespace {

std::uint32_t gpu_value(const gpu_signal& s, std::uint64_t value, const char* what) {
  if (value > 0xFFFFFFFFu)
    throw usage_error(str(s.owner(), ": ", what, " of signal ", s.name(), " with value ", value,
                          "; engines write and compare 32 bits (keep timeline values below 2^32)"));
  return std::uint32_t(value);
}

}  // namespace

void emit_signal_pm4(cmd_buffer& cb, const gpu_signal& s, std::uint64_t value) {
  pm4::emit_release_mem(cb, {.gcr = pm4::release_gcr_flush, .data = pm4::data_sel::value32,
                             .interrupt = pm4::int_sel::none, .address = s.value_va(),
                             .value = gpu_value(s, value, "RELEASE_MEM")});
}

void emit_timestamp_pm4(cmd_buffer& cb, const gpu_signal& s) {
  pm4::emit_release_mem(cb, {.data = pm4::data_sel::gpu_clock, .address = s.timestamp_va()});
}

void emit_wait_signal_pm4(cmd_buffer& cb, const gpu_signal& s, std::uint64_t value) {
  pm4::emit_wait_mem(cb, s.value_va(), compare::greater_equal, gpu_value(s, value, "WAIT_REG_MEM"));
}

void emit_signal_sdma(cmd_buffer& cb, const gpu_signal& s, std::uint64_t value) {
  sdma::emit_fence(cb, s.value_va(), gpu_value(s, value, "FENCE"));
}

void emit_timestamp_sdma(cmd_buffer& cb, const gpu_signal& s) { sdma::emit_timestamp(cb, s.timestamp_va()); }

void emit_wait_signal_sdma(cmd_buffer& cb, const gpu_signal& s, std::uint64_t value) {
  sdma::emit_poll_regmem(cb, s.value_va(), compare::greater_equal, gpu_value(s, value, "POLL_REGMEM"));
}

}  // namespace tg::queue
