// list_info.cpp: `tg-amd list` (what tg sees on PCI and USB) and `tg-amd info` (IP versions, VRAM,
// BARs from the discovery table; needs no firmware) and `tg-amd reset`.
#include <cstdio>
#include <string>
#include <vector>

#include "drivers/amd/am_device.hpp"
#include "drivers/amd/am_discovery.hpp"
#include "examples/tg-amd/tg_amd_commands.hpp"

namespace tg::tools {
namespace {

const char* kind_name(transport::transport_kind k) { return k == transport::transport_kind::pci ? "PCI" : "USB"; }

std::string mib(std::uint64_t bytes) {
  if (bytes >= (1ull << 30) && bytes % (1ull << 30) == 0) return std::to_string(bytes >> 30) + " GiB";
  if (bytes >= (1ull << 20)) return std::to_string(bytes >> 20) + " MiB";
  return std::to_string(bytes >> 10) + " KiB";
}

void print_bar(const char* what, unsigned index, const transport::bar_region& b) {
  if (b.size == 0) {
    std::printf("  BAR%u %-10s not implemented\n", index, what);
    return;
  }
  std::printf("  BAR%u %-10s 0x%012llx  %s%s%s\n", index, what, static_cast<unsigned long long>(b.bus_address),
              mib(b.size).c_str(), b.is_64bit ? ", 64-bit" : ", 32-bit", b.prefetchable ? ", prefetchable" : "");
}

}  // namespace

int run_list(amd_context& ctx) {
  std::vector<std::string> problems;
  std::vector<transport::device_entry> found = transport::list_devices(ctx.buses, &problems);
  if (found.empty()) std::printf("no AMD GPU found on PCI or USB\n");
  for (std::size_t i = 0; i < found.size(); ++i) {
    const transport::device_entry& e = found[i];
    std::printf("AMD:%zu  %s  %-22s", i, kind_name(e.kind), e.name.c_str());
    if (e.vendor_id) std::printf("  %04x:%04x", e.vendor_id, e.device_id);
    if (!e.detail.empty()) std::printf("  %s", e.detail.c_str());
    std::printf("\n");
  }
  for (const std::string& p : problems) std::printf("note: %s\n", p.c_str());
  return 0;
}

int run_info(amd_context& ctx, const std::string& device) {
  std::unique_ptr<transport::device_transport> t = transport::open_transport(device, ctx.buses);
  amd::discovery d = amd::read_discovery(*t);
  std::printf("%s: %s, %s of VRAM (%s BAR)\n", t->name().c_str(), d.gfx_target().c_str(), mib(d.vram_bytes).c_str(),
              d.large_bar ? "large" : "small");
  std::printf("  PCI id %04x:%04x\n", t->config_read(0x00, 2), t->config_read(0x02, 2));
  print_bar("VRAM", 0, d.bar0);
  print_bar("doorbells", 2, d.bar2);
  print_bar("registers", 5, d.bar5);
  std::printf("  IP blocks:\n");
  for (const amd::ip_block& ip : d.ips) {
    std::string_view name = amd::hw_name(ip.hw_id);
    std::printf("    %-8s #%u  %-8s%s\n", name.empty() ? std::to_string(ip.hw_id).c_str() : std::string(name).c_str(),
                ip.instance, ip.version.text().c_str(), ip.harvested ? "  (harvested)" : "");
  }
  if (d.gc)
    std::printf("  GC: %u shader engines, %u CUs per shader array, %u arrays per engine, wave%u, %u KiB LDS\n",
                d.gc->num_se, d.gc->cu_per_sh, d.gc->sh_per_se, d.gc->wave_size, d.gc->lds_size_kb);
  return 0;
}

// A transport reset alone does not reset an AMD GPU's engines (a function-level reset leaves
// the SMU and PSP running), so after it the GPU is booted once with force_full_boot: the driver
// then resets it through the SMU (mode 1) and brings every block up from scratch, and the
// teardown leaves it ready for a warm start.
int run_reset(amd_context& ctx, const std::string& device) {
  std::unique_ptr<transport::device_transport> t = transport::open_transport(device, ctx.buses);
  std::printf("%s: resetting (%s)\n", t->name().c_str(),
              t->kind() == transport::transport_kind::pci ? "PCI function-level reset"
                                                         : "USB port reset, PCIe link and BARs set up again");
  std::fflush(stdout);  // before the boot's progress lines on stderr
  t->reset();
  amd::am_options options;
  options.firmware_dir = ctx.firmware_dir;
  options.force_full_boot = true;
  if (ctx.verbose) options.progress = [](std::string_view s) { std::fprintf(stderr, "am: %.*s\n", int(s.size()), s.data()); };
  {
    amd::am_device gpu(*t, options);  // mode-1 reset through the SMU when it is alive, then a full boot
  }
  std::printf("%s: done: the GPU was reset and booted from scratch\n", t->name().c_str());
  return 0;
}

}  // namespace tg::tools
