// dispatch.hpp: host callbacks that stand in for GPU kernels, and what a dispatch hands them.
//
// A dispatched program runs as RDNA3 / RDNA4 machine code (drivers/emu/shader/interpreter.hpp) unless
// a host twin is registered for it: a test or the runtime registers a host function for a program
// address (or its code bytes); DISPATCH_DIRECT looks the address up from COMPUTE_PGM_LO/HI (address >> 8)
// and, when one is there, calls it once for the whole grid instead of interpreting, with the dispatch registers and memory access through the
// MMU, so a kernel reading an unmapped address faults as on hardware (the queue halts and the
// fault is recorded). Host twins remain for the AMD:EMU backend's tg kernels until tg emits AMDGPU code
// objects (issue 11, scope 6). The program address must itself be mapped: the CP fetches code through
// the page tables. System pages reach the gpu's system bus like any engine access (gpu.hpp); the
// AMD:EMU backend's host twins (emu_device) read their buffers through host pointers: VRAM only.
//
//   gpu.register_kernel(code_va, [](tg::emu::dispatch_context& ctx) {
//     auto a = ctx.kernarg<tg::memory::gpu_va>(0), c = ctx.kernarg<tg::memory::gpu_va>(8);
//     ctx.store(c, ctx.load<float>(a) + 1.0f);
//   });
//
// The callback runs on the thread that executes the queue, under the gpu's lock: it must use only
// its dispatch_context, never call back into the gpu (usage_error if it does).
#pragma once
#include <array>
#include <cstdint>
#include <cstring>
#include <functional>
#include <span>
#include <type_traits>

#include "drivers/emu/mmu.hpp"

namespace tg::emu {

// How the kernel finds its arguments: COMPUTE_USER_DATA_n and _n+1 hold the kernarg address.
// 0 for a kernel whose only user SGPRs are the kernarg pointer; 4 after a private segment
// buffer; 6 after that and a dispatch pointer (llvm/docs/AMDGPUUsage.rst).
struct kernel_abi {
  unsigned kernarg_sgpr = 0;
};

class dispatch_context {
 public:
  dispatch_context(mmu& m, gpu_va program, std::array<std::uint32_t, 3> workgroups,
                   std::array<std::uint32_t, 3> workgroup_size, std::array<std::uint32_t, 16> user_data,
                   unsigned user_sgpr_count, kernel_abi abi)
      : mmu_(m), program_(program), workgroups_(workgroups), workgroup_size_(workgroup_size),
        user_data_(user_data), user_sgpr_count_(user_sgpr_count), abi_(abi) {}

  gpu_va program() const { return program_; }
  // Grid size in workgroups (DISPATCH_DIRECT DW1..3, nvd.h: PACKET3_DISPATCH_DIRECT) and threads per workgroup
  // (COMPUTE_NUM_THREAD_X/Y/Z.NUM_THREAD_FULL).
  std::array<std::uint32_t, 3> workgroups() const { return workgroups_; }
  std::array<std::uint32_t, 3> workgroup_size() const { return workgroup_size_; }
  // COMPUTE_USER_DATA_0..15 as set, and how many the program asked for (COMPUTE_PGM_RSRC2.USER_SGPR).
  std::span<const std::uint32_t, 16> user_data() const { return user_data_; }
  unsigned user_sgpr_count() const { return user_sgpr_count_; }
  gpu_va kernargs() const {
    const unsigned i = abi_.kernarg_sgpr;
    return {i + 1 < 16 ? (std::uint64_t{user_data_[i + 1]} << 32 | user_data_[i]) : 0};
  }

  // Memory through the MMU (GC hub, as client CPC). A fault ends the kernel and halts the queue.
  void read(gpu_va va, std::span<std::byte> out) { mmu_.read(va, out, utcl2_client::cpc); }
  void write(gpu_va va, std::span<const std::byte> in) { mmu_.write(va, in, utcl2_client::cpc); }

  template <class T>
  T load(gpu_va va) {
    static_assert(std::is_trivially_copyable_v<T>, "dispatch_context::load<T>: T must be trivially copyable");
    T value;
    read(va, std::as_writable_bytes(std::span(&value, 1)));
    return value;
  }
  template <class T>
  void store(gpu_va va, const T& value) {
    static_assert(std::is_trivially_copyable_v<T>, "dispatch_context::store<T>: T must be trivially copyable");
    write(va, std::as_bytes(std::span(&value, 1)));
  }
  // The argument at byte `offset` of the kernarg segment. gpu_va reads as the 64-bit pointer.
  template <class T>
  T kernarg(std::uint64_t offset) {
    return load<T>(kernargs() + offset);
  }

 private:
  mmu& mmu_;
  gpu_va program_;
  std::array<std::uint32_t, 3> workgroups_, workgroup_size_;
  std::array<std::uint32_t, 16> user_data_;
  unsigned user_sgpr_count_;
  kernel_abi abi_;
};

using kernel_fn = std::function<void(dispatch_context&)>;

struct registered_kernel {
  kernel_fn fn;
  kernel_abi abi;
};

}  // namespace tg::emu
