// icache_test.cpp: the SQC instruction cache (drivers/emu/shader/instruction_cache.hpp) as host
// twins see it: code rewritten at an address that ran before keeps running until an ACQUIRE_MEM
// with GCR_CNTL.GLI_INV, the invalidate Linux puts at the start of every job
// (gfx_v11_0_emit_mem_sync / gfx_v12_0_emit_mem_sync). The interpreter's side of the same cache:
// tests/drivers/emu/shader/icache_test.cpp.
#include <doctest/doctest.h>

#include "runtime/queue/pm4.hpp"
#include "tests/drivers/emu/emu_rig.hpp"

using namespace tg::emu;
using namespace tg::emu::test;
namespace pm4 = tg::queue::pm4;
using tg::queue::cmd_buffer;

namespace {

pm4::kernel_summary kernel_at(const tg::queue::reg_table& gc, gpu_va code) {
  return {code, 0, 8, 0, gc.encode("regCOMPUTE_PGM_RSRC2", {{"USER_SGPR", 2}}), 0,
          std::uint16_t(pm4::kcp_kernarg_segment_ptr | pm4::kcp_wavefront_size32)};
}

// Dispatches the code at `code` (after an acquire with `gcr`) and returns what it wrote.
std::uint32_t run(emu_rig& rig, pm4_ring& q, const buffer& code, const buffer& args, const buffer& out,
                  std::uint32_t gcr) {
  const pm4::gfx_version gfx = rig.g.gen() == gfx_gen::gfx11 ? pm4::gfx_version::gfx11 : pm4::gfx_version::gfx12;
  cmd_buffer cb;
  pm4::emit_acquire_mem(cb, gcr);
  pm4::emit_dispatch(cb, kernel_at(*rig.g.chip().gc_table, code.va), {gfx, {1, 1, 1}, {32, 1, 1}, args.va, code.va});
  q.submit(cb);
  rig.g.step_until_idle();
  REQUIRE(rig.g.faults().empty());
  return rig.load32(out, 0);
}

}  // namespace

TEST_CASE_TEMPLATE("code rewritten at the same address runs stale until an ACQUIRE_MEM invalidates GLI", G, gfx11,
                   gfx12) {
  emu_rig rig(G::gen, 64 * MiB);
  pm4_ring q(rig, 16 * KiB);
  buffer code = rig.alloc(4 * KiB), args = rig.alloc(4 * KiB), out = rig.alloc(4 * KiB);
  rig.store64(args, 0, out.va.value);
  const std::vector<std::byte> a = random_bytes(gpu::code_hash_bytes, 1), b = random_bytes(gpu::code_hash_bytes, 2);
  for (const auto& [bytes, value] : {std::pair{&a, 0xAu}, {&b, 0xBu}})
    rig.g.register_kernel_code(*bytes, [value = value](dispatch_context& d) { d.store(d.kernarg<gpu_va>(0), value); });
  rig.write(code, 0, a);
  CHECK(run(rig, q, code, args, out, pm4::gcr_before_dispatch) == 0xA);
  rig.write(code, 0, b);  // new code at the same address
  CHECK(run(rig, q, code, args, out, pm4::gcr_before_dispatch) == 0xA);  // no GLI_INV: the SQC still holds A
  CHECK(run(rig, q, code, args, out, pm4::gcr_full_invalidate) == 0xB);  // the full acquire fetches B
  CHECK(rig.g.stats().icache_invalidates == 1);
}
