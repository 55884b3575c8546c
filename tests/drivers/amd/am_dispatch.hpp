// am_dispatch.hpp: the AM driver tests' one-workgroup dispatch: a code object at `code` (its
// host twin registered with the emulated GPU), 64 wave32 lanes, the kernarg segment pointer
// in the two user SGPRs, after the full acquire a job starts with. Built with the same PM4
// encoder the runtime uses.
#pragma once
#include <cstdint>

#include "drivers/amd/am_device.hpp"
#include "runtime/queue/pm4.hpp"

namespace tg::test {

inline queue::cmd_buffer one_group_dispatch(amd::am_device& dev, const amd::allocation& code, const amd::allocation& kernargs,
                                            std::uint32_t kernarg_bytes) {
  namespace pm4 = queue::pm4;
  const pm4::kernel_summary k{.entry = code.va,
                              .group_segment_bytes = 0,
                              .kernarg_bytes = kernarg_bytes,
                              .rsrc1 = 0,
                              .rsrc2 = 2 << 1,  // USER_SGPR = 2: the kernarg pointer
                              .rsrc3 = 0,
                              .code_properties = pm4::kcp_kernarg_segment_ptr | pm4::kcp_wavefront_size32};
  queue::cmd_buffer cb;
  // The job opens with the full acquire, as am_program::launch and Linux (gfx_v11_0_emit_mem_sync)
  // do: code copied in where other code ran is fetched fresh (the emulated SQC keeps stale code).
  pm4::emit_acquire_mem(cb, pm4::gcr_full_invalidate);
  pm4::emit_dispatch(cb, k, {.gfx = dev.gfx(), .workgroups = {1, 1, 1}, .workgroup_size = {64, 1, 1},
                             .kernargs = kernargs.va, .scratch = dev.scratch(),
                             .tmpring_size = dev.tmpring_size()});
  return cb;
}

}  // namespace tg::test
