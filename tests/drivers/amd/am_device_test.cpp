// am_device_test.cpp: the AM driver booting emulated GPUs end to end: gfx11 on the emulated PCI
// host and gfx12 behind the emulated USB bridge (limits on), through transport::open_transport as
// a real card is opened. Covers the full and the warm boot, zeroed allocations, bit-exact copies
// through every path, a PM4 RELEASE_MEM round trip, page faults on either queue reported with
// their address and recovered, the USB copy-in pipeline at its chunk boundaries, two sessions on
// one USB transport, a small BAR0 without ReBAR, and the boot's errors (missing firmware, PSP and
// SMU timeouts).
#include <doctest/doctest.h>

#include <algorithm>
#include <cstring>
#include <numeric>
#include <optional>
#include <utility>
#include <string>
#include <vector>

#include <tg/core/error.hpp>

#include "drivers/amd/am_device.hpp"
#include "tests/drivers/amd/am_dispatch.hpp"
#include "drivers/emu/machine/emulated_machine.hpp"
#include "runtime/queue/emit_signal.hpp"
#include "runtime/queue/pm4.hpp"
#include "runtime/queue/sdma.hpp"

using namespace tg;
using namespace std::chrono_literals;

namespace {

emu::emulated_machine_config machine_config(emu::gfx_gen gen, emu::emulated_bus bus) {
  return {.gen = gen, .vram_bytes = 512ull << 20, .bus = bus};
}

amd::am_options options_for(const emu::emulated_machine& m, std::vector<std::string>* steps = nullptr) {
  amd::am_options o;
  o.firmware_dir = m.firmware_dir();
  o.timeout = 2000ms;
  o.queue_timeout = 10000ms;
  if (steps) o.progress = [steps](std::string_view s) { steps->emplace_back(s); };
  return o;
}

std::vector<std::byte> pattern(std::size_t bytes, std::uint32_t seed) {
  std::vector<std::byte> out(bytes);
  std::uint32_t x = seed;
  for (std::size_t i = 0; i < bytes; i += 4) {
    x = x * 1664525u + 1013904223u;  // LCG: different bytes everywhere, cheap to make
    std::memcpy(out.data() + i, &x, std::min<std::size_t>(4, bytes - i));
  }
  return out;
}

// A few spots (first, middle, last 4 KiB and some in between) all zero.
void check_zeroed(amd::am_device& dev, const amd::allocation& a) {
  std::vector<std::byte> spot(4096);
  for (std::uint64_t at : {std::uint64_t{0}, a.bytes / 3, a.bytes / 2, a.bytes - 4096}) {
    at = at / 4096 * 4096;
    std::fill(spot.begin(), spot.end(), std::byte{0xAB});
    dev.copy_out(spot, a, at);
    CHECK_MESSAGE(std::all_of(spot.begin(), spot.end(), [](std::byte b) { return b == std::byte{0}; }),
                  "not zero at offset ", at);
  }
}

// Fill, release, allocate the same size again: the new allocation reads zero even where the old
// one had data (the heap hands the same VRAM back).
void check_allocations(amd::am_device& dev) {
  for (std::uint64_t bytes : {4ull << 20, 64ull << 20}) {
    amd::allocation a = dev.allocate(bytes);
    CHECK(a.bytes == bytes);
    dev.copy_in(a, 0, pattern(1 << 20, 7));
    dev.copy_in(a, bytes - (1 << 20), pattern(1 << 20, 8));
    dev.release(a);
    amd::allocation b = dev.allocate(bytes);
    check_zeroed(dev, b);
    dev.release(b);
  }
}

void check_copies(amd::am_device& dev, std::uint32_t seed) {
  const std::size_t bytes = 16 << 20;
  amd::allocation a = dev.allocate(bytes);
  const std::vector<std::byte> in = pattern(bytes, seed);
  dev.copy_in(a, 0, in);
  std::vector<std::byte> out(bytes);
  dev.copy_out(out, a, 0);
  CHECK(out == in);
  // An odd-sized, odd-placed piece (not a whole sector) round-trips too.
  const std::vector<std::byte> piece = pattern(12345 * 4 + 4, seed + 1);
  dev.copy_in(a, 4096 + 12, piece);
  std::vector<std::byte> back(piece.size());
  dev.copy_out(back, a, 4096 + 12);
  CHECK(back == piece);
  dev.release(a);
}

// RELEASE_MEM writes a value the host reads back; the timeline signal arrives behind it.
void check_release_mem(amd::am_device& dev) {
  amd::allocation target = dev.allocate(4096);
  queue::cmd_buffer cb;
  queue::pm4::emit_release_mem(cb, {.gcr = queue::pm4::release_gcr_flush,
                                    .data = queue::pm4::data_sel::value32,
                                    .address = target.va + 64,
                                    .value = 0x600DF00D});
  const queue::submission s = dev.compute().submit(cb);
  dev.compute().wait(s, 5000ms);
  dev.synchronize(5000ms);
  std::uint32_t seen = 0;
  dev.copy_out(std::as_writable_bytes(std::span(&seen, 1)), target, 64);
  CHECK(seen == 0x600DF00Du);
  dev.release(target);
}

// A dispatch of a code object uploaded with copy_in (kernels/fill.ll, run as machine code by the
// emulated GPU): the kernel writes i * 3 into the buffer its kernargs name. False when LLVM's
// tools are missing and nothing was dispatched.
bool check_dispatch(amd::am_device& dev) {
  const std::optional<test::am_kernel> k = test::load_kernel(dev, "fill", "fill");
  if (!k) return false;
  amd::allocation out = dev.allocate(4096), args = dev.allocate(4096);
  const std::uint32_t kernargs[6] = {std::uint32_t(out.va.value), std::uint32_t(out.va.value >> 32), 1000, 3, 0, 0};
  dev.copy_in(args, 0, std::as_bytes(std::span(kernargs)));
  dev.compute().submit(test::one_group_dispatch(dev, *k, args));
  dev.synchronize(5000ms);
  std::vector<std::uint32_t> seen(1000);
  dev.copy_out(std::as_writable_bytes(std::span(seen)), out, 0);
  CHECK(seen[0] == 0);
  CHECK(seen[1] == 3);
  CHECK(seen[999] == 2997);
  return true;
}

}  // namespace

TEST_CASE("am_device boots gfx11 over the emulated PCI host, copies, runs PM4 and boots warm again") {
  emu::emulated_machine m(machine_config(emu::gfx_gen::gfx11, emu::emulated_bus::pci));
  {
    std::unique_ptr<transport::device_transport> t = transport::open_transport("AMD", m.buses());
    std::vector<std::string> steps;
    amd::am_device dev(*t, options_for(m, &steps));
    const amd::am_info& i = dev.info();
    CHECK(i.transport == t->name());
    CHECK(i.kind == transport::transport_kind::pci);
    CHECK(i.gfx_target == "gfx1100");
    CHECK(i.gc.major == 11);
    CHECK(i.vram_bytes == 512ull << 20);
    CHECK(i.bar0.size > 0);
    CHECK_FALSE(i.warm_boot);
    CHECK(std::find(steps.begin(), steps.end(), "psp: autoload rlc") != steps.end());
    CHECK(steps.front() == "discovery");
    CHECK(m.device().psp().sos_alive);
    CHECK(m.device().smu().features_enabled);
    check_allocations(dev);
    check_copies(dev, 1);
    check_release_mem(dev);
    check_dispatch(dev);
  }
  CHECK(m.device().read_register(m.device().chip().gc_reg.scratch_reg6) == 0);
  const std::size_t psp_commands = m.device().psp_log().size(), smu_messages = m.device().smu_log().size();
  std::unique_ptr<transport::device_transport> t = transport::open_transport("AMD", m.buses());
  amd::am_device again(*t, options_for(m));
  CHECK(again.info().warm_boot);
  CHECK(m.device().psp_log().size() == psp_commands);  // the warm path leaves the firmware alone
  CHECK(m.device().smu_log().size() == smu_messages);
  check_copies(again, 2);
  check_release_mem(again);
}

TEST_CASE("am_device boots gfx12 behind the emulated USB bridge within its transfer limits") {
  emu::emulated_machine m(machine_config(emu::gfx_gen::gfx12, emu::emulated_bus::usb));
  REQUIRE(m.bridge()->limits().enabled);
  std::uint64_t chunk = 0;
  {
    std::unique_ptr<transport::device_transport> t = transport::open_transport("AMD", m.buses());
    chunk = t->limits().max_write_chunk;
    REQUIRE(chunk > 0);
    amd::am_device dev(*t, options_for(m));
    CHECK(dev.info().kind == transport::transport_kind::usb);
    CHECK(dev.info().gfx_target == "gfx1200");
    CHECK_FALSE(dev.info().warm_boot);
    // The PSP got its firmware through bridge memory mapped into the GPU VA (as tinygrad's AM_PSP.init_sw does on USB).
    CHECK(m.device().psp().sos_alive);
    check_allocations(dev);
    check_copies(dev, 3);
    check_release_mem(dev);
    check_dispatch(dev);
    const emu::usb::bridge_stats s = m.bridge()->stats();
    CHECK(s.largest_stream_write <= chunk);
    CHECK(s.largest_stream_read <= t->limits().max_read_chunk);
    CHECK(s.largest_bulk_out <= t->staging()->size());
    CHECK(s.wedges == 0);
    CHECK(s.timeouts == 0);
    CHECK(s.sram_write_bytes >= 16u << 20);  // the copies went through the window, not BAR streams
  }
  std::unique_ptr<transport::device_transport> t = transport::open_transport("AMD", m.buses());
  amd::am_device again(*t, options_for(m));
  CHECK(again.info().warm_boot);
  check_copies(again, 4);
  CHECK(m.bridge()->stats().largest_stream_write <= chunk);
}

// Copy-in over USB is the pipeline of tinygrad's AMDAllocator._copyin: 256 KiB windows (payload 256 KiB - 4), a
// sentinel per chunk, SDMA draining one window while the host fills the other.
// The two pairings the boot tests above leave out: gfx11 behind the USB bridge, gfx12 on PCI.
TEST_CASE("a code object dispatched through am_device runs as machine code on gfx11 over USB and gfx12 over PCI") {
  for (const auto& [gen, bus] : {std::pair{emu::gfx_gen::gfx11, emu::emulated_bus::usb},
                                 std::pair{emu::gfx_gen::gfx12, emu::emulated_bus::pci}}) {
    CAPTURE(int(gen));
    emu::emulated_machine m(machine_config(gen, bus));
    std::unique_ptr<transport::device_transport> t = transport::open_transport("AMD", m.buses());
    amd::am_device dev(*t, options_for(m));
    if (!check_dispatch(dev)) continue;
    CHECK(m.device().faults().empty());
    CHECK(m.device().last_dispatch().waves == 2);  // interpreted: 64 threads, two wave32s
  }
}

TEST_CASE("copy-in behind the USB bridge streams 256 KiB windows and is bit-exact at every chunk boundary") {
  emu::emulated_machine m(machine_config(emu::gfx_gen::gfx12, emu::emulated_bus::usb));
  std::unique_ptr<transport::device_transport> t = transport::open_transport("AMD", m.buses());
  amd::am_device dev(*t, options_for(m));
  REQUIRE(t->staging()->fence_bus_address() != 0);
  const std::uint64_t payload = (256 << 10) - 4;
  amd::allocation a = dev.allocate(4 << 20);
  const emu::usb::bridge_stats before = m.bridge()->stats();
  std::uint32_t seed = 20;
  std::uint64_t sent = 0;
  // One byte, one whole chunk, a short last chunk inside and one reaching the window's last slot.
  for (std::uint64_t bytes : {std::uint64_t{1}, payload, payload + 1, 2 * payload + 250000, 3 * payload + 4096}) {
    const std::vector<std::byte> in = pattern(bytes, ++seed);
    dev.copy_in(a, 12, in);
    std::vector<std::byte> out(bytes);
    dev.copy_out(out, a, 12);
    CHECK_MESSAGE(out == in, bytes, " bytes");
    sent += bytes;
  }
  const emu::usb::bridge_stats s = m.bridge()->stats();
  CHECK(s.largest_bulk_out <= 256u << 10);  // one window at a time
  CHECK(s.largest_stream_write <= t->limits().max_write_chunk);
  CHECK(s.timeouts == 0);
  CHECK(s.errors == 0);
  // Each chunk: one image of its payload and sentinel in whole sectors (9 chunks); each copy: two
  // sentinel slots zeroed, since the copy-out before it dirtied the windows (5 copies).
  CHECK(s.sram_write_bytes - before.sram_write_bytes <= sent + 9 * 1024 + 5 * 2 * (16 << 10));
  dev.release(a);
}

// A full boot needs 512 KiB of bridge SRAM for the PSP's firmware; the first session's staging
// must have been given back for a second am_device on the same transport object to boot.
TEST_CASE("a second am_device on one usb_transport boots fully again (mode-1 reset) and copies") {
  emu::emulated_machine m(machine_config(emu::gfx_gen::gfx12, emu::emulated_bus::usb));
  std::unique_ptr<transport::device_transport> t = transport::open_transport("AMD", m.buses());
  {
    amd::am_device first(*t, options_for(m));
    check_copies(first, 30);
  }
  const std::uint64_t resets = m.device().mode1_resets();
  amd::am_options o = options_for(m);
  o.force_full_boot = true;
  amd::am_device second(*t, o);
  CHECK_FALSE(second.info().warm_boot);
  CHECK(m.device().mode1_resets() == resets + 1);
  CHECK(m.device().psp().sos_alive);
  check_copies(second, 31);
  check_release_mem(second);
}

// No ReBAR: BAR0 stays at the emulated card's initial 256 MiB, so discovery reads the table at
// the end of VRAM through MM_INDEX (bit 31) / MM_INDEX_HI / MM_DATA (tinygrad's AMDev._read_vram).
TEST_CASE("with a small BAR0, page tables and CPU-visible memory stay inside it and copies bounce through DMA") {
  emu::emulated_machine m(machine_config(emu::gfx_gen::gfx11, emu::emulated_bus::pci));
  transport::system_buses buses = m.buses();
  buses.pci_options.resize_bar0 = false;
  std::unique_ptr<transport::device_transport> t = transport::open_transport("AMD", buses);
  amd::am_device dev(*t, options_for(m));
  CHECK_FALSE(dev.info().large_bar);
  CHECK(dev.info().bar0.size == 256ull << 20);
  amd::allocation visible = dev.allocate(8 << 20, true);
  CHECK(visible.cpu_visible);
  CHECK(visible.pa.value + visible.bytes <= dev.info().bar0.size);
  amd::allocation hidden = dev.allocate(8 << 20);
  CHECK(hidden.pa.value >= dev.info().bar0.size);  // CPU-invisible VRAM is used first for these
  dev.release(visible);
  dev.release(hidden);
  check_allocations(dev);
  check_copies(dev, 6);  // the 16 MiB buffer lies beyond BAR0: DMA bounce buffer + SDMA
  check_release_mem(dev);
}

TEST_CASE("a forced full boot of a booted GPU resets it through the SMU first") {
  emu::emulated_machine m(machine_config(emu::gfx_gen::gfx11, emu::emulated_bus::pci));
  std::unique_ptr<transport::device_transport> t = transport::open_transport("AMD", m.buses());
  { amd::am_device first(*t, options_for(m)); }
  const std::uint64_t resets = m.device().mode1_resets();
  amd::am_options o = options_for(m);
  o.force_full_boot = true;
  amd::am_device dev(*t, o);
  CHECK_FALSE(dev.info().warm_boot);
  CHECK(m.device().mode1_resets() == resets + 1);
  check_release_mem(dev);
}

TEST_CASE("a page fault on the copy queue names the queue and the address, and recovery restarts it") {
  emu::emulated_machine m(machine_config(emu::gfx_gen::gfx11, emu::emulated_bus::pci));
  std::unique_ptr<transport::device_transport> t = transport::open_transport("AMD", m.buses());
  amd::am_device dev(*t, options_for(m));
  queue::cmd_buffer cb;
  const std::uint64_t bad = 0x3000'0000'0000ull;  // above the VA window: never mapped
  queue::sdma::emit_const_fill(cb, memory::gpu_va{bad}, 0, 4096);
  dev.copy().submit(cb);
  CHECK_THROWS_WITH_AS(dev.copy().synchronize(3000ms), doctest::Contains("queue sdma0: GPU page fault at VA 0x"),
                       device_error);
  CHECK(dev.copy().is_failed());
  dev.recover_copy();
  CHECK(dev.recoveries() == 1);
  check_copies(dev, 5);
}

TEST_CASE("a page fault on the compute queue names the queue and the address, and recover_compute restarts it") {
  emu::emulated_machine m(machine_config(emu::gfx_gen::gfx12, emu::emulated_bus::pci));
  std::unique_ptr<transport::device_transport> t = transport::open_transport("AMD", m.buses());
  amd::am_device dev(*t, options_for(m));
  queue::cmd_buffer cb;
  queue::pm4::emit_release_mem(cb, {.gcr = queue::pm4::release_gcr_flush,
                                    .data = queue::pm4::data_sel::value32,
                                    .address = memory::gpu_va{0x3000'0000'0000ull},  // never mapped
                                    .value = 1});
  const queue::submission s = dev.compute().submit(cb);
  CHECK_THROWS_WITH_AS(dev.compute().wait(s, 3000ms), doctest::Contains("queue compute0: GPU page fault at VA 0x"),
                       device_error);
  CHECK(dev.compute().is_failed());
  dev.recover_compute();
  CHECK(dev.recoveries() == 1);
  CHECK_FALSE(dev.compute().is_failed());
  check_release_mem(dev);
  check_release_mem(dev);  // and again: the timeline goes on from the recovered queue
}

TEST_CASE("a missing firmware file stops the boot with the path it looked for") {
  emu::emulated_machine_config c = machine_config(emu::gfx_gen::gfx11, emu::emulated_bus::pci);
  c.write_firmware = false;
  emu::emulated_machine m(c);
  std::unique_ptr<transport::device_transport> t = transport::open_transport("AMD", m.buses());
  CHECK_THROWS_WITH_AS(amd::am_device(*t, options_for(m)),
                       doctest::Contains((m.firmware_dir() / "psp_13_0_0_sos.bin").string().c_str()), device_error);
}

TEST_CASE("a silent PSP bootloader times out naming C2PMSG_35") {
  emu::emulated_machine m(machine_config(emu::gfx_gen::gfx12, emu::emulated_bus::pci));
  m.device().set_psp_faults({.bootloader_silent = true});
  std::unique_ptr<transport::device_transport> t = transport::open_transport("AMD", m.buses());
  amd::am_options o = options_for(m);
  o.timeout = 100ms;
  CHECK_THROWS_WITH_AS(amd::am_device(*t, o), doctest::Contains("C2PMSG_35"), device_error);
}

TEST_CASE("a silent SMU times out naming the message and MP1 C2PMSG_90") {
  emu::emulated_machine m(machine_config(emu::gfx_gen::gfx11, emu::emulated_bus::pci));
  m.device().set_smu_silent(true);
  std::unique_ptr<transport::device_transport> t = transport::open_transport("AMD", m.buses());
  amd::am_options o = options_for(m);
  o.timeout = 100ms;
  CHECK_THROWS_WITH_AS(amd::am_device(*t, o), doctest::Contains("SetDriverDramAddrHigh) timeout after 100 ms (MP1 C2PMSG_90"),
                       device_error);
}
