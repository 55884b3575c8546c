// icache_test.cpp: the interpreter's decoded-instruction cache is the SQC instruction cache
// (drivers/emu/shader/instruction_cache.hpp): a kernel's code rewritten at the same address keeps
// running its old instructions until an ACQUIRE_MEM with GCR_CNTL.GLI_INV, the invalidate Linux
// emits at the start of every job (gfx_v11_0.c: gfx_v11_0_emit_mem_sync, gfx_v12_0.c:
// gfx_v12_0_emit_mem_sync), and runs the new ones after it.
#define DOCTEST_CONFIG_IMPLEMENT
#include "tests/drivers/emu/shader/shader_rig.hpp"

using namespace tg::emu;
using namespace tg::emu::test;
namespace pm4 = tg::queue::pm4;

namespace {

// out[tid] = value, compiled for `mcpu`.
std::vector<std::byte> store_kernel(const temp_dir& dir, const std::string& mcpu, unsigned value) {
  const auto src = dir.path() / ("store_" + std::to_string(value) + ".ll");
  std::ofstream(src) << "declare i32 @llvm.amdgcn.workitem.id.x()\n"
                        "define amdgpu_kernel void @k(ptr addrspace(1) %out) #0 {\n"
                        "  %t = call i32 @llvm.amdgcn.workitem.id.x()\n"
                        "  %p = getelementptr i32, ptr addrspace(1) %out, i32 %t\n"
                        "  store i32 " << value << ", ptr addrspace(1) %p\n  ret void\n}\n"
                        "attributes #0 = { nounwind " << no_implicit_inputs << " }\n";
  return read_bytes(build_code_object(dir, src, mcpu));
}

// Dispatches `k` after an ACQUIRE_MEM with `gcr`; returns what lane 0 wrote.
std::uint32_t run(shader_rig& r, const buffer& out, std::uint32_t gcr) {
  tg::queue::cmd_buffer cb;
  pm4::emit_acquire_mem(cb, gcr);
  r.q->submit(cb);
  REQUIRE(r.dispatch("k", {1, 1, 1}, {32, 1, 1}, {out.va.value}));
  return r.get<std::uint32_t>(out, 1)[0];
}

}  // namespace

TEST_CASE("an interpreted kernel rewritten at its address runs stale until ACQUIRE_MEM invalidates GLI") {
  for (const char* mcpu : {"gfx1100", "gfx1200"}) {
    CAPTURE(mcpu);
    temp_dir dir;
    shader_rig r(gen_of(mcpu));
    r.load(store_kernel(dir, mcpu, 0xA));
    const buffer out = r.alloc(4096);
    CHECK(run(r, out, pm4::gcr_full_invalidate) == 0xA);
    CHECK(run(r, out, pm4::gcr_before_dispatch) == 0xA);  // decoded once, run again from the cache

    const tg::amd::code_object b(store_kernel(dir, mcpu, 0xB));
    REQUIRE(b.image_bytes() == r.co->image_bytes());  // the same layout: only the stored constant differs
    r.rig.write(r.code, 0, b.image_at(r.code.va));     // new code at the same address
    CHECK(run(r, out, pm4::gcr_before_dispatch) == 0xA);  // no GLI_INV: the SQC still holds the old code
    CHECK(run(r, out, pm4::gcr_full_invalidate) == 0xB);  // the full acquire fetches the new code
    CHECK(run(r, out, pm4::gcr_before_dispatch) == 0xB);
  }
}

int main(int argc, char** argv) {
  if (!have_llvm_tools()) return 77;
  doctest::Context ctx(argc, argv);
  return ctx.run();
}
