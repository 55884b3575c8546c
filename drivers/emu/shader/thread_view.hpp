// thread_view.hpp: the emulated GPU's memory and instruction cache as one interpreter thread sees
// them during a dispatch (interpreter.cpp runs a dispatch's workgroups on several host threads).
//
// The MMU and the instruction cache belong to the gpu and are not thread-safe, so during a
// dispatch they sit behind `dispatch_shared::lock`. In front of them each thread keeps its own view:
// the 4 KiB pages it has translated, with the permission each access kind needs already checked,
// as host pointers into VRAM; and the instructions it has fetched, as pointers into the shared
// cache. Neither can go stale while the dispatch runs: a TLB flush or an ACQUIRE_MEM is a packet the
// queue runs before or after the dispatch, never during it, and the views end with the dispatch.
// A miss takes the lock and asks the MMU, which translates and latches a fault exactly as for any
// other access (so the faulting lane's own address is reported), or decodes into the shared cache.
// Pages on the system bus, and pages that run past VRAM, are not kept: every access to them takes
// the lock and goes through the MMU. Global atomics hold `dispatch_shared::atomics` from their read
// to their write, so lanes of workgroups on other threads see them whole.
#pragma once
#include <array>
#include <cstdint>
#include <mutex>
#include <span>

#include "drivers/emu/mmu.hpp"
#include "drivers/emu/shader/instruction_cache.hpp"

namespace tg::emu::shader {

// What every thread of a dispatch shares.
struct dispatch_shared {
  mmu& memory;
  instruction_cache& icache;
  std::mutex lock;     // memory and icache
  std::mutex atomics;  // read-modify-writes on global memory
};

class thread_view {
 public:
  explicit thread_view(dispatch_shared& s) : s_(s) {}

  // Global memory through the MMU (client CPC, as every shader access): the same signatures as mmu's.
  void read(gpu_va va, std::span<std::byte> out, utcl2_client client);
  void write(gpu_va va, std::span<const std::byte> in, utcl2_client client);
  std::unique_lock<std::mutex> atomic_section() { return std::unique_lock(s_.atomics); }

  // The instruction at `pc`: this thread's pointer, else the shared cache's entry, else
  // decode(memory, icache, pc) stored in the shared cache (under the lock).
  template <class Decode>
  const cached_instruction& fetch(std::uint64_t pc, const Decode& decode) {
    code_slot& slot = code_[(pc >> 2) % code_.size()];
    if (slot.pc == pc) return *slot.in;
    std::lock_guard<std::mutex> g(s_.lock);
    const cached_instruction* d = s_.icache.find(pc);
    if (d == nullptr) d = &s_.icache.remember(pc, decode(s_.memory, s_.icache, pc));
    slot = {pc, d};
    return *d;
  }

 private:
  static constexpr std::uint64_t page_bytes = 4096;
  struct page {
    std::uint64_t number = ~std::uint64_t{0};
    std::byte* host = nullptr;  // nullptr: reach it through the MMU every time
    bool readable = false, writable = false;
  };
  struct code_slot {
    std::uint64_t pc = ~std::uint64_t{0};
    const cached_instruction* in = nullptr;
  };
  // The host address of the page holding `va` once `access` is allowed there; nullptr for a page
  // only the MMU can reach. Throws page_fault as the MMU does.
  std::byte* host_page(gpu_va va, access_kind access, utcl2_client client);

  dispatch_shared& s_;
  std::array<page, 256> pages_{};
  std::array<code_slot, 1024> code_{};
};

}  // namespace tg::emu::shader
