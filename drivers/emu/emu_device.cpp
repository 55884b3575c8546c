// emu_device.cpp: the AMD:EMU backend booted on an emulated machine (see emu_device.hpp), and the
// parsing of its device-name arguments.
#include "drivers/emu/emu_device.hpp"

#include <charconv>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <tg/core/error.hpp>
#include <tg/device.hpp>
#include <tg/log.hpp>

#include "runtime/transport/open_transport.hpp"

namespace tg::emu {

namespace {

constexpr const char* accepted =
    "accepted: AMD:EMU, AMD:EMU:gfx11, AMD:EMU:gfx12, AMD:EMU:gfx1100 (RX 7900 XTX), AMD:EMU:gfx1101 (RX 7800 XT), "
    "AMD:EMU:gfx1200 (RX 9060), AMD:EMU:gfx1201 (RX 9070 XT), AMD:EMU:usb, AMD:EMU:pci, AMD:EMU:gfx1101:usb "
    "(a generation or processor, and a bus, each at most once), and vram=<size> for a card of that much VRAM "
    "(AMD:EMU:gfx12:usb:vram=256M; M or G, at least 128M, default 512M)";

// "256M", "1G": a VRAM size for the emulated card; nullopt when it is not one.
std::optional<std::uint64_t> parse_vram(std::string_view text) {
  if (text.size() < 2) return std::nullopt;
  const char unit = text.back();
  const int shift = unit == 'M' || unit == 'm' ? 20 : unit == 'G' || unit == 'g' ? 30 : -1;
  std::uint64_t n = 0;
  const std::string_view digits = text.substr(0, text.size() - 1);
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), n);
  if (shift < 0 || ec != std::errc() || end != digits.data() + digits.size() || n == 0 || n > (1u << 16) >> (shift - 20))
    return std::nullopt;
  return n << shift;
}

std::unique_ptr<transport::device_transport> open_on(emulated_machine& m) {
  return transport::open_transport("AMD", m.buses());  // as a card is opened: the bus is searched
}

amd::am_options options_for(emulated_machine& m) {
  amd::am_options o;
  o.firmware_dir = m.firmware_dir();
  // The machine outlives the backend's queues (am_backend keeps it alive).
  // Each fault is reported once: the driver recovers the queue and goes on.
  o.emulator_faults = [&m, reported = std::make_shared<std::size_t>(0)]() -> std::string {
    const std::vector<fault_record> faults = m.device().faults();
    if (faults.size() < *reported) *reported = 0;  // cleared since (gpu::clear_faults)
    for (std::size_t i = *reported; i < faults.size(); ++i) {
      const fault_kind k = faults[i].kind;
      if (k == fault_kind::shader_error) {
        *reported = i + 1;
        return describe(faults[i]);
      }
    }
    return {};
  };
  return o;
}

// TG_DEBUG=2: one line per interpreted dispatch, with what it did (drivers/emu/shader/interpreter.hpp).
void log_dispatch(const shader::launch& l, const shader::dispatch_counters& k) {
  const auto& g = l.workgroups;
  const auto& s = l.workgroup_size;
  log(log_level::debug,
      str("emu: dispatch on ", l.target, " of ", l.program, ", ", g[0], "x", g[1], "x", g[2], " groups of ", s[0], "x", s[1],
          "x", s[2], ": ", k.waves, " waves, ", k.instructions, " wave-instructions (valu ", k.valu, ", salu ", k.salu,
          ", smem ", k.smem, ", vmem ", k.vmem, ", lds ", k.lds, ", branch ", k.branch, ", other ", k.other, "), ",
          k.global_bytes_read, " bytes read and ", k.global_bytes_written, " written by the lanes, ",
          k.global_lines * 128, " bytes in distinct 128-byte lines, ", k.memory_waits, " waits for loads in flight (",
          k.max_wave_memory_waits, " in the wave with most), ", k.vgprs, " VGPRs (", k.waves_per_simd,
          " waves per SIMD)"));
}

}  // namespace

emu_device_config parse_emu_device_args(std::string_view args) {
  emu_device_config config;
  bool has_gen = false, has_bus = false, has_vram = false;
  for (std::string_view rest = args; !rest.empty();) {
    const std::size_t colon = rest.find(':');
    const std::string_view word = rest.substr(0, colon);
    rest = colon == std::string_view::npos ? std::string_view() : rest.substr(colon + 1);
    if ((word == "gfx11" || word == "gfx12" || emulated_processor_gen(word)) && !has_gen) {
      config.gen = parse_emulated_gen(word);
      config.processor = parse_emulated_processor(word);
      has_gen = true;
    } else if ((word == "pci" || word == "usb" || word == "PCI" || word == "USB") && !has_bus) {
      config.bus = parse_emulated_bus(word);
      has_bus = true;
    } else if (word.starts_with("vram=") && !has_vram) {
      const std::optional<std::uint64_t> bytes = parse_vram(word.substr(5));
      if (!bytes || *bytes < (128ull << 20))
        throw usage_error(str("device 'AMD:EMU:", args, "': '", word, "' is not a VRAM size of 128M or more; ", accepted));
      config.vram_bytes = *bytes;
      has_vram = true;
    } else {
      throw usage_error(str("device 'AMD:EMU:", args, "': '", word, "' is not a generation, processor or bus for the emulated GPU; ",
                            accepted));
    }
  }
  return config;
}

emu_device::emu_device(const emu_device_config& config)
    : emu_device(std::make_shared<emulated_machine>(
          emulated_machine_config{.gen = config.gen, .processor = config.processor, .vram_bytes = config.vram_bytes,
                                  .bus = config.bus})) {}

// am_backend keeps a reference to the machine (keep_alive) so that the GPU runs until the driver
// has shut its queues down and the transport is closed.
emu_device::emu_device(std::shared_ptr<emulated_machine> machine)
    : am_backend("AMD:EMU", open_on(*machine), options_for(*machine), machine), machine_(std::move(machine)) {
  if (debug_level() >= 2) machine_->device().observe_dispatches(log_dispatch);
}

}  // namespace tg::emu
