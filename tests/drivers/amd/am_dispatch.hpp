// am_dispatch.hpp: the AM driver tests' kernels: kernels/<name>.ll compiled at test time
// (add_kernel.hpp: llc-19 + ld.lld-19), loaded on an am_device as the AMD backend loads a code
// object (am_device.hpp), and its one-workgroup dispatch of 64 wave32 lanes after the full acquire
// a job starts with, built with the same PM4 encoder the runtime uses. The emulated GPU runs the
// kernel's own machine code (drivers/emu/shader).
//
//   std::optional<tg::test::am_kernel> inc = tg::test::load_kernel(dev, "increment", "increment");
//   if (!inc) return;  // no LLVM tools: the test says so and checks nothing more
//   dev.compute().submit(tg::test::one_group_dispatch(dev, *inc, kernargs));
#pragma once
#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "drivers/amd/am_device.hpp"
#include "drivers/emu/machine/emulated_machine.hpp"
#include "drivers/amd/code_object.hpp"
#include "runtime/queue/pm4.hpp"
#include "tests/drivers/amd/add_kernel.hpp"

namespace tg::test {

// The driver's options for an emulated machine: its firmware, and timeouts that fail a test in
// seconds rather than hang it.
inline amd::am_options options_for(const emu::emulated_machine& m) {
  amd::am_options o;
  o.firmware_dir = m.firmware_dir();
  o.timeout = std::chrono::milliseconds(2000);
  o.queue_timeout = std::chrono::milliseconds(10000);
  return o;
}

// build_kernel, once per process for each file and target.
inline const std::vector<std::byte>& built_kernel(const std::string& file, const std::string& mcpu) {
  static std::map<std::string, std::vector<std::byte>> built;
  const std::string key = file + "/" + mcpu;
  auto it = built.find(key);
  if (it == built.end()) it = built.emplace(key, build_kernel(file, mcpu)).first;
  return it->second;
}

struct am_kernel {
  amd::code_object co;
  amd::allocation image;
  queue::pm4::kernel_summary summary;
};

// kernels/<file>.ll's `kernel` in fresh VRAM with the scratch it asks for; nullopt (with a doctest
// message) when LLVM's tools are missing.
inline std::optional<am_kernel> load_kernel(amd::am_device& dev, const std::string& file, const std::string& kernel) {
  const std::vector<std::byte>& elf = built_kernel(file, dev.info().gfx_target);  // the card's own processor
  if (elf.empty()) {
    MESSAGE("llc-19 / ld.lld-19 (TG_LLC, TG_LLD) or TG_AMD_KERNELS missing: the dispatch is not checked");
    return std::nullopt;
  }
  amd::code_object co(elf);
  amd::allocation image = dev.allocate(co.image_bytes(), false, co.load_alignment());
  dev.copy_in(image, 0, co.image_at(image.va));
  dev.ensure_scratch(co.kernel(kernel).descriptor.private_segment_fixed_size);
  const queue::pm4::kernel_summary summary = co.summary(kernel, image.va);
  return am_kernel{std::move(co), image, summary};
}

inline queue::cmd_buffer one_group_dispatch(amd::am_device& dev, const am_kernel& k, const amd::allocation& kernargs,
                                            std::uint32_t threads = 64) {
  namespace pm4 = queue::pm4;
  queue::cmd_buffer cb;
  // The job opens with the full acquire, as am_program::launch and Linux (gfx_v11_0_emit_mem_sync)
  // do: code copied in where other code ran is fetched fresh (the emulated SQC keeps stale code).
  pm4::emit_acquire_mem(cb, pm4::gcr_full_invalidate);
  pm4::emit_dispatch(cb, k.summary, {.gfx = dev.gfx(), .workgroups = {1, 1, 1}, .workgroup_size = {threads, 1, 1},
                                     .kernargs = kernargs.va, .scratch = dev.scratch(),
                                     .tmpring_size = dev.tmpring_size()});
  return cb;
}

}  // namespace tg::test
