// am_backend_test.cpp: the runtime devices "AMD" and "AMD:EMU" on the AM driver, opened by name
// through tg::device: 1 MiB copies bit-exact on the emulated PCI host and behind the emulated USB
// bridge, a code object (kernels/add.ll, built with llc-19 / ld.lld-19 at test time) run as
// machine code, a tg plan compiled by the AMD code generator and interpreted, its errors for what it
// cannot compile or launch, and "AMD" on a machine without an AMD GPU. Exits 77 (skipped) when the LLVM tools are missing and everything else passed.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

#include <tg/tg.hpp>

#include "tests/drivers/amd/add_kernel.hpp"
#include "drivers/emu/emu_device.hpp"
#include <tg/device.hpp>
#include "runtime/transport/open_transport.hpp"

namespace {

bool tools_missing = false;  // main turns it into 77
constexpr const char* emulated[] = {"AMD:EMU", "AMD:EMU:gfx12:usb"};

std::vector<std::byte> random_bytes(std::size_t n, unsigned seed) {
  std::vector<std::byte> out(n);
  std::mt19937 rng(seed);
  for (auto& b : out) b = std::byte(rng());
  return out;
}

}  // namespace

TEST_CASE("AMD:EMU and AMD:EMU:gfx12:usb copy 1 MiB in and out bit-exact through tg::device") {
  for (const char* name : emulated) {
    CAPTURE(std::string(name));
    tg::device dev(name);
    auto& emu = dynamic_cast<tg::emu::emu_device&>(dev.impl());
    CHECK(emu.device().info().kind ==
          (emu.machine().bridge() ? tg::transport::transport_kind::usb : tg::transport::transport_kind::pci));
    const std::size_t n = 1 << 20;
    const std::vector<std::byte> in = random_bytes(n, 3);
    std::vector<std::byte> out(n);
    tg::buffer buf = dev.allocate(n);
    buf.copy_in(in.data(), n);
    buf.copy_out(out.data(), n);
    CHECK(out == in);
    CHECK(emu.emulated_gpu().faults().empty());
  }
}

TEST_CASE("a code object runs on AMD:EMU as interpreted machine code, ordered between the copies") {
  for (const char* name : emulated) {
    CAPTURE(std::string(name));
    tg::device dev(name);
    auto& emu = dynamic_cast<tg::emu::emu_device&>(dev.impl());
    const std::vector<std::byte> elf = tg::test::build_add(emu.device().info().gfx_target);
    if (elf.empty()) {
      tools_missing = true;
      MESSAGE("skipped: llc-19 / ld.lld-19 / TG_AMD_KERNELS missing");
      return;
    }
    const tg::amd::code_object co(elf);
    constexpr std::uint32_t groups = 8, group_size = 64, count = groups * group_size;
    std::vector<float> a(count), b(count), sum(count);
    for (std::uint32_t i = 0; i < count; ++i) a[i] = float(i) * 0.5f, b[i] = 1000.0f - float(i);
    tg::buffer da = dev.allocate(4 * count), db = dev.allocate(4 * count), dout = dev.allocate(4 * count);
    da.copy_in(a.data(), 4 * count);
    db.copy_in(b.data(), 4 * count);
    const tg::amd::kernarg args[] = {tg::amd::kernarg_pointer, tg::amd::kernarg_pointer, tg::amd::kernarg_pointer};
    auto add = emu.load_program(co, "add", args, {.workgroups = {groups, 1, 1}, .workgroup_size = {group_size, 1, 1}});
    void* const buffers[] = {dout.data(), da.data(), db.data()};
    add->launch(buffers, {});
    // The second launch reads what the first wrote: out = out + b.
    void* const again[] = {dout.data(), dout.data(), db.data()};
    add->launch(again, {});
    dout.copy_out(sum.data(), 4 * count);  // waits for both kernels
    for (std::uint32_t i = 0; i < count; ++i) REQUIRE(sum[i] == (a[i] + b[i]) + b[i]);
    CHECK(emu.emulated_gpu().stats().dispatches == 2);
    CHECK(emu.emulated_gpu().last_dispatch().waves == count / 32);  // wave32: the code really ran
    // Each job opens with the full acquire of gfx_v11_0_emit_mem_sync / gfx_v12_0_emit_mem_sync:
    // the instruction cache invalidated before code copied in at a reused address can run.
    CHECK(emu.emulated_gpu().stats().icache_invalidates == 2);
    CHECK(emu.emulated_gpu().faults().empty());
    // A launch with the wrong number of buffers is refused before anything is queued.
    CHECK_THROWS_WITH_AS(add->launch(std::span(buffers, 2), {}), doctest::Contains("takes 3 arguments"),
                         tg::usage_error);
  }
}

TEST_CASE("a tg plan on AMD:EMU is compiled by the AMD code generator and computed by the emulated GPU") {
  constexpr auto x = tg::input<float>("x", tg::dims<300>);  // more than one workgroup, the last partial
  constexpr auto plan = tg::lower(x * 3.0f + 1.0f);
  std::vector<float> xs(300);
  for (std::size_t i = 0; i < xs.size(); ++i) xs[i] = float(i) * 0.25f - 20.0f;
  for (const char* name : emulated) {
    CAPTURE(std::string(name));
    tg::device dev(name);
    auto& emu = dynamic_cast<tg::emu::emu_device&>(dev.impl());
    const std::vector<float> got = dev.run(plan, {{"x", xs}}).to_vector<float>();
    REQUIRE(got.size() == xs.size());
    // x * 3 + 1 is one fma or a multiply and an add; both are exact for these quarter-steps.
    for (std::size_t i = 0; i < xs.size(); ++i) REQUIRE(got[i] == xs[i] * 3.0f + 1.0f);
    CHECK(emu.emulated_gpu().stats().dispatches == 1);
    CHECK(emu.emulated_gpu().faults().empty());
  }
}

TEST_CASE("what the AMD code generator cannot compile is a usage error naming the problem") {
  tg::device dev("AMD:EMU");
  CHECK_THROWS_WITH_AS(dev.impl().compile({{}, 0, "empty"}), doctest::Contains("the kernel has no store"),
                       tg::usage_error);
  // A compiled kernel launched with fewer buffers than it reads is refused before anything is queued.
  constexpr auto x = tg::input<float>("x", tg::dims<4>);
  constexpr auto plan = tg::lower(x + x);
  const tg::plan_view view = plan.view();
  auto p = dev.impl().compile({view.kernel_nodes(0), view.kernels[0].global_ranges, "twice"});
  void* const one[] = {nullptr};
  CHECK_THROWS_WITH_AS(p->launch(one, {}), doctest::Contains("uses 2 buffers"), tg::usage_error);
  // What -v lists for it: the processor, the schedule and the registers from the metadata note.
  const std::string resources = p->describe();
  CAPTURE(resources);
  CHECK(resources.rfind("gfx1100, ", 0) == 0);
  CHECK(resources.find(" SGPRs, ") != std::string::npos);
  CHECK(resources.find(" VGPRs (") != std::string::npos);
  CHECK(resources.find(" waves per SIMD), ") != std::string::npos);
}

TEST_CASE("AMD opens real hardware only: without a GPU or bridge it says none was found") {
  tg::transport::system_buses buses = tg::transport::real_buses();
  if (!tg::transport::list_devices(buses).empty()) {
    MESSAGE("skipped: this machine has an AMD GPU or bridge, which this test must not boot");
    return;
  }
  CHECK_THROWS_WITH_AS(tg::device("AMD"), doctest::Contains("no AMD GPU found on PCI or USB"), tg::device_error);
  CHECK_THROWS_WITH_AS(tg::device("AMD:USB:3-2"), doctest::Contains("no AMD GPU found on USB"), tg::device_error);
  CHECK_THROWS_AS(tg::device("AMD:EMUX"), tg::usage_error);  // neither AMD:EMU nor a transport
}

int main(int argc, char** argv) {
  doctest::Context context(argc, argv);
  const int failed = context.run();
  if (failed || context.shouldExit()) return failed;
  if (tools_missing) {
    std::fprintf(stderr, "skipped: the code object part needs llc-19 and ld.lld-19 (apt-get install llvm-19 lld-19)\n");
    return 77;
  }
  return 0;
}
