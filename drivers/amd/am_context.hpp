// am_context.hpp: what the AM driver's IP blocks share while booting and running one GPU: the
// transport, registers by name, discovery, options, the boot VRAM allocator and early VRAM access.
//
// Internal to drivers/amd (am_device owns one; ip/*.cpp take it by reference). VRAM written here
// goes through BAR0 in bounded chunks (never one huge write, tinygrad/runtime/support/am/amdev.py), so it works over USB.
// Not thread-safe.
#pragma once
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "drivers/amd/am_discovery.hpp"
#include "drivers/amd/am_mmio.hpp"
#include "drivers/amd/am_options.hpp"
#include "runtime/memory/gfx_gen.hpp"
#include "runtime/memory/vram_access.hpp"
#include "runtime/memory/vram_allocator.hpp"

namespace tg::amd {

// PSP (MP0) and SMU (MP1) mailboxes: C2PMSG_n sits at MP0 base + 0x40 + n and MP1 base + 0x240 + n
// (the IP offset headers in drivers/gpu/drm/amd/include/asic_reg: C2PMSG_35 = 0x16063, MP1 C2PMSG_53 = 0x16275 with MP seg0 0x16000).
inline constexpr std::uint32_t mp0_c2pmsg(unsigned n) { return 0x40 + n; }
inline constexpr std::uint32_t mp1_c2pmsg(unsigned n) { return 0x240 + n; }

struct am_context {
  am_context(transport::device_transport& t, const am_options& o);

  transport::device_transport& t;
  am_options opt;
  mmio io;
  discovery disc;
  memory::gfx_gen gen;
  std::unique_ptr<ip_registers> gc, mmhub, osssys;
  std::uint64_t mp0_base = 0, mp1_base = 0;
  std::uint64_t fb_base = 0;  // MC address of VRAM offset 0 (tinygrad/runtime/support/am/amdev.py: AMMemoryManager; gmc_v11_0.c)
  memory::vram_allocator boot;  // the first 32 MiB (tinygrad/runtime/support/am/amdev.py: AMMemoryManager; gmc_v11_0.c)

  const std::string& name() const { return io.device(); }
  void progress(std::string_view step) const {
    if (opt.progress) opt.progress(step);
  }
  std::uint64_t mc(memory::gpu_pa pa) const { return fb_base + pa.value; }
  std::uint32_t mp0(unsigned n) { return io.read(mp0_base + mp0_c2pmsg(n)); }
  void set_mp0(unsigned n, std::uint32_t v) { io.write(mp0_base + mp0_c2pmsg(n), v); }
  std::uint32_t mp1(unsigned n) { return io.read(mp1_base + mp1_c2pmsg(n)); }
  void set_mp1(unsigned n, std::uint32_t v) { io.write(mp1_base + mp1_c2pmsg(n), v); }

  // VRAM through BAR0, in chunks of at most the transport's write limit (and 1 MiB).
  void write_vram(memory::gpu_pa at, std::span<const std::byte> bytes);
  void read_vram(memory::gpu_pa at, std::span<std::byte> bytes);
  void zero_vram(memory::gpu_pa at, std::uint64_t bytes);
  // A zeroed boot-region allocation.
  memory::gpu_pa boot_alloc(std::uint64_t bytes, std::uint64_t align = 4096);
};

// memory::vram_access over BAR0: the page tables live in VRAM the CPU reaches through it.
class bar_vram_access final : public memory::vram_access {
 public:
  explicit bar_vram_access(am_context& c) : c_(c) {}
  std::uint64_t read64(memory::gpu_pa at) override;
  void write64(memory::gpu_pa at, std::uint64_t word) override;
  void write_words(memory::gpu_pa first, std::span<const std::uint64_t> words) override;
  void read_words(memory::gpu_pa first, std::span<std::uint64_t> words) override;

 private:
  am_context& c_;
};

}  // namespace tg::amd
