// am_options.hpp: how an am_device boots and runs: firmware folder, timeouts, ring sizes, progress.
//
//   tg::amd::am_options o;
//   o.firmware_dir = "/tmp/fw";
//   o.progress = [](std::string_view step) { std::cerr << "am: " << step << "\n"; };
#pragma once
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <string_view>

namespace tg::amd {

struct am_options {
  std::filesystem::path firmware_dir = "/lib/firmware/amdgpu";
  // Register polls, PSP and SMU handshakes (tinygrad/runtime/support/am/amdev.py: 10 s); tests shorten it.
  std::chrono::milliseconds timeout{10000};
  // Queue waits without progress (tinygrad/runtime/support/am/ip.py; gfx_v11_0.c: 30 s).
  std::chrono::milliseconds queue_timeout{30000};
  bool force_full_boot = false;  // the reference's AM_RESET=1 (tinygrad/runtime/support/am/ip.py; gfx_v11_0.c)
  // 0: the defaults of tinygrad/runtime/support/am/ip.py; gfx_v11_0.c scaled down (compute 1 MiB; SDMA 1 MiB; USB compute 8 KiB).
  std::uint64_t compute_ring_bytes = 0, sdma_ring_bytes = 0;
  // Called with each boot step's name ("discovery", "psp: load sos", ...), for the CLI.
  std::function<void(std::string_view)> progress;
  // Emulated cards only (drivers/emu): what the emulator recorded that a card would show as a
  // hung queue (an instruction its interpreter cannot run, say), or "". Queue waits poll it with
  // the GPU's own fault registers, so a test sees the reason at once instead of a 30 s timeout.
  std::function<std::string()> emulator_faults;
};

}  // namespace tg::amd
