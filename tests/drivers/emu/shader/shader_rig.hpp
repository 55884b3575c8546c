// shader_rig.hpp: runs code objects on the emulated GPU's interpreter: loads a linked object with
// drivers/amd's loader into emulated VRAM, dispatches a kernel through a PM4 ring (runtime/queue's
// encoders, as the AM driver does) and signals its end. For the interpreter's semantics tests.
#pragma once
#include <doctest/doctest.h>

#include <cstring>
#include <filesystem>
#include <optional>
#include <regex>
#include <string>
#include <vector>

#include "drivers/amd/code_object.hpp"
#include "tests/drivers/emu/emu_rig.hpp"
#include "tests/drivers/emu/shader/llvm_tools.hpp"

namespace tg::emu::test {

// The IR attributes that keep llc (without opt's attributor) from asking for user SGPRs tg's
// dispatch does not provide (dispatch id, queue pointer) and for the v5 hidden arguments.
inline constexpr const char* no_implicit_inputs =
    "\"amdgpu-no-dispatch-ptr\" \"amdgpu-no-queue-ptr\" \"amdgpu-no-dispatch-id\" \"amdgpu-no-implicitarg-ptr\" "
    "\"amdgpu-no-hostcall-ptr\" \"amdgpu-no-heap-ptr\" \"amdgpu-no-multigrid-sync-arg\" \"amdgpu-no-completion-action\" "
    "\"amdgpu-no-default-queue\" \"amdgpu-no-lds-kernel-id\"";

// corpus/<name>.ll with those attributes added to every `attributes #n = { nounwind ...}` group, compiled
// for `mcpu` and linked.
inline std::vector<std::byte> corpus_object(const temp_dir& dir, const std::string& name, const std::string& mcpu) {
  const std::filesystem::path src = std::filesystem::path(tool("TG_SHADER_CORPUS", "tests/drivers/emu/shader/corpus")) / (name + ".ll");
  std::ifstream in(src);
  std::string ir((std::istreambuf_iterator<char>(in)), {});
  REQUIRE_MESSAGE(!ir.empty(), "cannot read " << src);
  ir = std::regex_replace(ir, std::regex("= \\{ nounwind"), std::string("= { nounwind ") + no_implicit_inputs);
  const auto patched = dir.path() / (name + ".ll");
  std::ofstream(patched) << ir;
  return read_bytes(build_code_object(dir, patched, mcpu));
}

// Assembly (a .s text with its .amdhsa_kernel descriptors) assembled for `mcpu` and linked.
inline std::vector<std::byte> assembly_object(const temp_dir& dir, const std::string& name, const std::string& mcpu,
                                              const std::string& text) {
  const auto s = dir.path() / (name + ".s");
  std::ofstream(s) << text;
  return read_bytes(build_code_object(dir, s, mcpu, true));
}

inline gfx_gen gen_of(const std::string& mcpu) { return mcpu.rfind("gfx12", 0) == 0 ? gfx_gen::gfx12 : gfx_gen::gfx11; }

class shader_rig {
 public:
  explicit shader_rig(gfx_gen gen, unsigned shader_threads = 0)
      : rig(gen, 256 * MiB, shader_threads), sig(rig.alloc(4096)), scratch(rig.alloc(4 * MiB)), kargs(rig.alloc(4096)) {
    q.emplace(rig, 64 * KiB);
  }

  // After a fault halted the queue: the driver's recovery, a fresh ring on the same HQD.
  void reset_queue() {
    rig.g.clear_faults();
    q.emplace(rig, 64 * KiB);
  }

  // Copies the object's image to fresh VRAM; the image's address is remembered for dispatch().
  void load(const std::vector<std::byte>& elf) {
    co = std::make_unique<amd::code_object>(elf);
    code = rig.alloc(co->image_bytes() + 4096);
    REQUIRE(code.va.value % co->load_alignment() == 0);
    const auto image = co->image_at(code.va);
    rig.write(code, 0, image);
  }

  buffer alloc(std::uint64_t bytes) { return rig.alloc(bytes); }
  template <class T>
  void put(const buffer& b, const std::vector<T>& v) { rig.write(b, 0, std::as_bytes(std::span(v))); }
  template <class T>
  std::vector<T> get(const buffer& b, std::size_t n) {
    std::vector<T> v(n);
    rig.g.vram().read(b.pa, std::as_writable_bytes(std::span(v)));
    return v;
  }

  // Dispatches `kernel` over `groups` workgroups of `size` threads with these kernargs; steps the
  // emulator until idle. True when the end-of-dispatch signal arrived.
  bool dispatch(const std::string& kernel, std::array<std::uint32_t, 3> groups, std::array<std::uint32_t, 3> size,
                const std::vector<std::uint64_t>& args, std::uint32_t tmpring_size = 0) {
    rig.write(kargs, 0, std::as_bytes(std::span(args)));
    const auto k = co->summary(kernel, code.va);
    queue::cmd_buffer cb;
    queue::pm4::dispatch_args a{rig.g.gen() == gfx_gen::gfx11 ? queue::pm4::gfx_version::gfx11 : queue::pm4::gfx_version::gfx12,
                                groups, size, kargs.va, scratch.va};
    a.tmpring_size = tmpring_size;
    queue::pm4::emit_dispatch(cb, k, a);
    queue::pm4::release_mem r;
    r.gcr = queue::pm4::release_gcr_flush;
    r.address = sig.va;
    r.value = ++signal_value;
    queue::pm4::emit_release_mem(cb, r);
    q->submit(cb);
    rig.g.step_until_idle();
    return rig.load32(sig, 0) == signal_value;
  }

  emu_rig rig;
  std::optional<pm4_ring> q;
  buffer sig, scratch, kargs, code;
  std::unique_ptr<amd::code_object> co;
  std::uint32_t signal_value = 0;
};

}  // namespace tg::emu::test
