// emu_device_test.cpp: the "AMD:EMU" backend (the emulated GPU on the AM driver) through
// tg::device: registration and its arguments, copies (BAR0 on the emulated PCI host, the USB
// window and SDMA in bounded chunks behind the emulated bridge), and a kernel built from LLVM IR at
// test time (llc-19, ld.lld-19), loaded with drivers/amd/code_object and interpreted.
// Exits 77 (skipped) when the LLVM tools are missing and everything else passed (TG_LLC, TG_LLD
// and TG_AMD_KERNELS name them).
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

#include "tests/drivers/amd/add_kernel.hpp"
#include "drivers/emu/emu_device.hpp"
#include <tg/device.hpp>

using namespace tg::emu;
using tg::test::build_add;

namespace {
bool tools_missing = false;  // set by the LLVM test; main turns it into 77
}  // namespace

TEST_CASE("AMD:EMU is registered on the AM driver and refuses other arguments") {
  tg::device dev("AMD:EMU");
  CHECK(dev.impl().name() == "AMD:EMU");
  auto* emu = dynamic_cast<emu_device*>(&dev.impl());
  REQUIRE(emu != nullptr);
  CHECK(emu->device().info().gfx_target == "gfx1100");
  CHECK(emu->device().info().kind == tg::transport::transport_kind::pci);
  CHECK_THROWS_WITH_AS(tg::device("AMD:EMU:gfx13"), doctest::Contains("'gfx13' is not a generation, processor or bus"),
                       tg::usage_error);
  CHECK_THROWS_AS(tg::device("AMD:EMU:gfx11:gfx12"), tg::usage_error);
  // The AMD code generator is on: an AST it cannot compile (here: one with no store) is a usage error.
  CHECK_THROWS_WITH_AS(dev.impl().compile({{}, 0, "k"}), doctest::Contains("the kernel has no store"), tg::usage_error);
}

TEST_CASE("copies in and out are bit-exact; behind the USB bridge they go through SDMA in bounded chunks") {
  for (const char* name : {"AMD:EMU:gfx11", "AMD:EMU:gfx12", "AMD:EMU:gfx12:usb"}) {
    CAPTURE(name);
    tg::device dev(name);
    auto& emu = dynamic_cast<emu_device&>(dev.impl());
    const bool usb = emu.machine().bridge() != nullptr;
    const std::size_t n = 3 * (std::size_t(1) << 20) + 12345;  // several USB windows and a ragged tail
    std::vector<std::byte> in(n), out(n);
    std::mt19937 rng(7);
    for (auto& b : in) b = std::byte(rng());
    tg::buffer buf = dev.allocate(n);
    const std::uint64_t sdma_before = emu.emulated_gpu().stats().sdma_packets;
    buf.copy_in(in.data(), n);
    buf.copy_out(out.data(), n);
    CHECK(std::memcmp(in.data(), out.data(), n) == 0);
    // On PCI the emulated card's BAR0 covers VRAM, so the CPU copies; behind the bridge SDMA does.
    if (usb) CHECK(emu.emulated_gpu().stats().sdma_packets > sdma_before + 8);  // chunk by chunk
    // A copy into the middle of a buffer, and back out of it.
    const std::uint32_t marker = 0xC0FFEE11;
    emu.copy_in(static_cast<std::byte*>(buf.data()) + 4096, &marker, 4);
    std::uint32_t back = 0;
    emu.copy_out(&back, static_cast<std::byte*>(buf.data()) + 4096, 4);
    CHECK(back == marker);
    CHECK_THROWS_AS(emu.copy_in(static_cast<std::byte*>(buf.data()) + n, &marker, 4096 * 8), tg::usage_error);
    CHECK(emu.emulated_gpu().faults().empty());
  }
}

TEST_CASE("a code object built from LLVM IR runs as machine code: add is bit-exact") {
  for (auto [name, mcpu] : {std::pair{"AMD:EMU:gfx11", "gfx1100"}, std::pair{"AMD:EMU:gfx12", "gfx1200"},
                            std::pair{"AMD:EMU:gfx12:usb", "gfx1200"}}) {
    CAPTURE(mcpu);
    const std::vector<std::byte> elf = build_add(mcpu);
    if (elf.empty()) {
      tools_missing = true;
      MESSAGE("skipped: llc-19 / ld.lld-19 / TG_AMD_KERNELS missing");
      return;
    }
    tg::amd::code_object co(elf);
    tg::device dev(name);
    auto& emu = dynamic_cast<emu_device&>(dev.impl());

    constexpr std::uint32_t groups = 40, group_size = 64, n = groups * group_size;
    std::vector<float> a(n), b(n), out(n);
    std::mt19937 rng(11);
    std::uniform_real_distribution<float> dist(-1e3f, 1e3f);
    for (std::uint32_t i = 0; i < n; ++i) a[i] = dist(rng), b[i] = dist(rng);
    tg::buffer da = dev.allocate(4 * n), db = dev.allocate(4 * n), dout = dev.allocate(4 * n);
    da.copy_in(a.data(), 4 * n);
    db.copy_in(b.data(), 4 * n);

    const tg::amd::kernarg args[] = {tg::amd::kernarg_pointer, tg::amd::kernarg_pointer, tg::amd::kernarg_pointer};
    std::shared_ptr<tg::program> add =
        emu.load_program(co, "add", args, {.workgroups = {groups, 1, 1}, .workgroup_size = {group_size, 1, 1}});
    void* const buffers[] = {dout.data(), da.data(), db.data()};
    add->launch(buffers, {});
    dout.copy_out(out.data(), 4 * n);
    dev.synchronize();

    std::vector<float> want(n);
    for (std::uint32_t i = 0; i < n; ++i) want[i] = a[i] + b[i];
    CHECK(std::memcmp(out.data(), want.data(), 4 * n) == 0);
    CHECK(emu.emulated_gpu().stats().dispatches == 1);
    CHECK(emu.emulated_gpu().last_dispatch().waves == n / 32);  // interpreted, wave32
    CHECK(emu.emulated_gpu().last_dispatch().global_bytes_written == 4 * n);
    CHECK(emu.emulated_gpu().faults().empty());
  }
}

int main(int argc, char** argv) {
  doctest::Context context(argc, argv);
  const int failed = context.run();
  if (failed || context.shouldExit()) return failed;
  if (tools_missing) {
    std::fprintf(stderr, "skipped: the LLVM part needs llc-19 and ld.lld-19 (apt-get install llvm-19 lld-19)\n");
    return 77;
  }
  return 0;
}
