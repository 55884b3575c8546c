// main.cpp: `tg-amd`, the command-line tool for AMD GPUs that tg drives itself (in a PCIe slot
// with amdgpu unloaded, or in an ASM2464 USB4/USB3 dock with the custom firmware).
//
//   tg-amd list                               every GPU tg can see, and through which transport
//   tg-amd info AMD:0                         IP versions, VRAM and BARs (no firmware needed)
//   tg-amd reset AMD:USB:0                    reset the GPU (PCI) or the bridge and link (USB)
//   tg-amd copy-bench AMD:0 --size 256        host -> VRAM and VRAM -> host bandwidth
//   tg-amd --emulate gfx12 --via usb info     the same against the emulated GPU (no card needed)
#include <CLI/CLI.hpp>
#include <cstdio>
#include <exception>
#include <memory>
#include <optional>

#include "drivers/emu/machine/emulated_machine.hpp"
#include "examples/tg-amd/tg_amd_commands.hpp"

int main(int argc, char** argv) {
  CLI::App app{
      "tg-amd: find, inspect, reset and benchmark AMD GPUs (RX 7000 gfx11, RX 9000 gfx12) that tg drives from user "
      "space, over PCI (sysfs; unload amdgpu first) or USB (ASM2464 dock with the custom firmware).\n"
      "Device names: AMD (the first found, PCI before USB), AMD:<n>, AMD:PCI:<n>, AMD:USB:<n>, "
      "AMD:PCI:0000:03:00.0, AMD:USB:3-2."};
  app.require_subcommand(1);
  std::string emulate, via = "pci", firmware_dir = "/lib/firmware/amdgpu";
  bool realtime = false;
  std::uint64_t emulated_vram_mib = 1024;
  app.add_option("--emulate", emulate,
                 "use an emulated GPU instead of the machine's: gfx11 / gfx1100 (RX 7900 XTX), gfx1101 (RX 7800 XT), "
                 "gfx12 / gfx1200 (RX 9060) or gfx1201 (RX 9070 XT)");
  app.add_option("--via", via, "with --emulate: the emulated GPU sits on pci (a slot) or usb (an ASM2464 bridge)")
      ->check(CLI::IsMember({"pci", "usb"}));
  app.add_option("--emulated-vram", emulated_vram_mib, "with --emulate: VRAM in MiB")->check(CLI::Range(256, 16384));
  app.add_flag("--realtime", realtime,
               "with --emulate --via usb: the bridge sleeps its modelled transfer times, so copy-bench measures "
               "wall-clock throughput against the modelled bandwidth");
  app.add_option("--firmware", firmware_dir, "firmware folder (Debian: firmware-amd-graphics)")
      ->capture_default_str();
  bool verbose = false;
  app.add_flag("-v,--verbose", verbose, "print each boot step");

  std::string device = "AMD";
  CLI::App* list = app.add_subcommand("list", "list the AMD GPUs tg can open, PCI first, then USB");
  CLI::App* info = app.add_subcommand("info", "IP versions, VRAM size and BARs from the GPU's discovery table");
  info->add_option("device", device, "which GPU")->capture_default_str();
  CLI::App* reset = app.add_subcommand("reset", "reset the GPU function (PCI) or the USB bridge and its link, then reset the GPU through its SMU and boot it from scratch (needs the firmware)");
  reset->add_option("device", device, "which GPU")->capture_default_str();
  CLI::App* bench = app.add_subcommand("copy-bench", "boot the GPU and measure host->VRAM and VRAM->host copies");
  bench->add_option("device", device, "which GPU")->capture_default_str();
  tg::tools::copy_bench_options bench_options;
  std::uint64_t size_mib = 64;
  bench->add_option("--size", size_mib, "MiB per copy")->check(CLI::Range(1, 4096))->capture_default_str();
  bench->add_option("--repeat", bench_options.repeats, "copies per direction")->check(CLI::Range(1, 100))
      ->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  bench_options.bytes = size_mib << 20;

  try {
    tg::tools::amd_context ctx;
    ctx.verbose = verbose;
    std::unique_ptr<tg::emu::emulated_machine> machine;
    if (!emulate.empty()) {
      tg::emu::emulated_machine_config mc{.gen = tg::emu::parse_emulated_gen(emulate),
                                          .processor = tg::emu::parse_emulated_processor(emulate),
                                          .vram_bytes = emulated_vram_mib << 20,
                                          .bus = tg::emu::parse_emulated_bus(via)};
      if (realtime) mc.bridge.limits.time = tg::emu::usb::time_mode::real;
      machine = std::make_unique<tg::emu::emulated_machine>(mc);
      ctx.buses = machine->buses();
      ctx.firmware_dir = machine->firmware_dir();
      ctx.machine = machine.get();
    } else {
      ctx.buses = tg::transport::real_buses();
      ctx.firmware_dir = firmware_dir;
    }
    if (*list) return tg::tools::run_list(ctx);
    if (*info) return tg::tools::run_info(ctx, device);
    if (*reset) return tg::tools::run_reset(ctx, device);
    if (*bench) return tg::tools::run_copy_bench(ctx, device, bench_options);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tg-amd: %s\n", e.what());
    return 1;
  }
  return 0;
}
