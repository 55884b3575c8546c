// copy_bench.cpp: `tg-amd copy-bench`: boots the GPU, then times copies of one buffer host -> VRAM
// and back, checking every byte, and prints MB/s per direction (the median of the repeats). On the
// emulated USB bridge it also prints the fraction of the bandwidth the bridge models.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

#include "drivers/amd/am_device.hpp"
#include "drivers/emu/machine/emulated_machine.hpp"
#include <tg/core/error.hpp>
#include "examples/tg-amd/tg_amd_commands.hpp"

namespace tg::tools {
namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int run_copy_bench(amd_context& ctx, const std::string& device, const copy_bench_options& options) {
  std::unique_ptr<transport::device_transport> t = transport::open_transport(device, ctx.buses);
  amd::am_options am;
  am.firmware_dir = ctx.firmware_dir;
  if (ctx.verbose) am.progress = [](std::string_view step) { std::fprintf(stderr, "am: %.*s\n", int(step.size()), step.data()); };
  auto boot_start = std::chrono::steady_clock::now();
  amd::am_device gpu(*t, am);
  double boot_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - boot_start).count();
  std::printf("%s: %s, %s boot in %.2f s\n", t->name().c_str(), gpu.info().gfx_target.c_str(),
              gpu.info().warm_boot ? "warm" : "full", boot_s);

  std::vector<std::byte> data(options.bytes), back(options.bytes);
  std::mt19937_64 rng(42);
  for (std::size_t i = 0; i < data.size(); i += 8) {
    std::uint64_t r = rng();
    std::memcpy(data.data() + i, &r, std::min<std::size_t>(8, data.size() - i));
  }
  amd::allocation buf = gpu.allocate(options.bytes);
  std::vector<double> in_mbs, out_mbs;
  for (int r = 0; r < options.repeats; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    gpu.copy_in(buf, 0, data);
    auto t1 = std::chrono::steady_clock::now();
    std::fill(back.begin(), back.end(), std::byte{0});
    gpu.copy_out(back, buf, 0);
    auto t2 = std::chrono::steady_clock::now();
    if (std::memcmp(data.data(), back.data(), data.size()) != 0)
      throw device_error(str(t->name(), ": copy-bench: VRAM -> host returned different bytes than were copied in"));
    in_mbs.push_back(double(options.bytes) / std::chrono::duration<double>(t1 - t0).count() / 1e6);
    out_mbs.push_back(double(options.bytes) / std::chrono::duration<double>(t2 - t1).count() / 1e6);
  }
  double in = median(in_mbs), out = median(out_mbs);
  std::printf("host -> VRAM: %.1f MB/s   VRAM -> host: %.1f MB/s   (%llu MiB, median of %d, verified)\n", in, out,
              static_cast<unsigned long long>(options.bytes >> 20), options.repeats);
  if (ctx.machine && ctx.machine->bridge()) {
    const emu::usb::bridge_limits& lim = ctx.machine->bridge()->limits();
    if (lim.enabled && lim.time == emu::usb::time_mode::real)
      std::printf("emulated bridge models %.0f MB/s for the SRAM path: %.0f%% (in), %.0f%% (out)\n",
                  lim.sram_bytes_per_s / 1e6, 100 * in * 1e6 / lim.sram_bytes_per_s,
                  100 * out * 1e6 / lim.sram_bytes_per_s);
    else
      std::printf("note: the emulated bridge ran in virtual time; pass --realtime to compare with its modelled "
                  "%.0f MB/s\n", lim.sram_bytes_per_s / 1e6);
  }
  gpu.release(buf);
  return 0;
}

}  // namespace tg::tools
