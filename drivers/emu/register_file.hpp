// register_file.hpp: the emulated MMIO registers: dword values by index, with per-register behaviour.
//
// A register without behaviour reads back what was last written, 0 after reset (the reference
// mock's rule, tinygrad's mock GPU (test/mockgpu/amd)). A behaviour makes a register read-only (the emulator sets it with
// poke), computes what a read returns (a semaphore taken by the read), or acts on a write (start
// a queue, invalidate the TLB). The registers of a banked range keep one copy per bank, chosen
// by a selector: the HQD block, one copy per ME/pipe/queue picked by GRBM_GFX_CNTL (tinygrad/runtime/support/am/ip.py; gfx_v11_0.c).
//
// Not thread-safe: the gpu serialises every access under its lock.
#pragma once
#include <cstdint>
#include <functional>
#include <unordered_map>

namespace tg::emu {

class register_file {
 public:
  struct behaviour {
    std::function<std::uint32_t(std::uint32_t stored)> on_read;  // what a read returns
    std::function<void(std::uint32_t value)> on_write;           // runs after the value is stored
    bool read_only = false;                                      // writes are dropped (and counted)
  };

  std::uint32_t read(std::uint32_t index);
  void write(std::uint32_t index, std::uint32_t value);

  // The stored value, skipping behaviours (for the emulator itself). Banked registers use the
  // current bank, or the one given.
  std::uint32_t peek(std::uint32_t index) const;
  void poke(std::uint32_t index, std::uint32_t value);
  std::uint32_t peek_bank(std::uint32_t bank, std::uint32_t index) const;
  void poke_bank(std::uint32_t bank, std::uint32_t index, std::uint32_t value);

  void set_behaviour(std::uint32_t index, behaviour b) { behaviours_[index] = std::move(b); }
  bool has_behaviour(std::uint32_t index) const { return behaviours_.count(index) != 0; }
  // Registers first..last (inclusive) are banked; bank_of() names the current bank.
  void set_banked_range(std::uint32_t first, std::uint32_t last, std::function<std::uint32_t()> bank_of);
  std::uint32_t current_bank() const { return bank_of_ ? bank_of_() : 0; }

  std::uint64_t dropped_writes() const { return dropped_writes_; }

  // Power-on: every value 0, no behaviours, no banked range (a mode-1 reset, before the gpu
  // installs its behaviours again). Never call it from inside a behaviour.
  void clear();

 private:
  bool is_banked(std::uint32_t index) const { return index >= banked_first_ && index <= banked_last_; }
  std::uint64_t key(std::uint32_t bank, std::uint32_t index) const;

  std::unordered_map<std::uint64_t, std::uint32_t> values_;
  std::unordered_map<std::uint32_t, behaviour> behaviours_;
  std::uint32_t banked_first_ = 1, banked_last_ = 0;  // empty
  std::function<std::uint32_t()> bank_of_;
  std::uint64_t dropped_writes_ = 0;
};

}  // namespace tg::emu
