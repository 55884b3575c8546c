// hw_smoke_test.cpp: the hw suite on a real AMD GPU: boot, copies in and out, one add kernel; 77 without a card.
//
// Boots the first card tg finds (needs its firmware in /lib/firmware/amdgpu and, on PCI, root
// with amdgpu unbound). The kernel part builds kernels/add.ll with llc-19 / ld.lld-19 for the
// card's gfx target and is skipped with a message when they are missing.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdio>
#include <random>
#include <vector>

#include <tg/device.hpp>

#include "tests/drivers/amd/add_kernel.hpp"
#include "drivers/amd/am_backend.hpp"
#include "runtime/transport/open_transport.hpp"

namespace {

std::vector<std::byte> random_bytes(std::size_t n, unsigned seed) {
  std::vector<std::byte> out(n);
  std::mt19937 rng(seed);
  for (auto& b : out) b = std::byte(rng());
  return out;
}

tg::device& card() {
  static tg::device dev("AMD");
  return dev;
}

}  // namespace

TEST_CASE("a real AMD GPU copies buffers in and out bit-exact") {
  tg::device& dev = card();
  auto& amd = dynamic_cast<tg::amd::am_backend&>(dev.impl());
  MESSAGE("booted " << dev.name() << ": " << amd.device().info().gfx_target);
  for (std::size_t n : {std::size_t(4096), std::size_t(1) << 20, (std::size_t(16) << 20) + 12}) {
    CAPTURE(n);
    const std::vector<std::byte> in = random_bytes(n, unsigned(n));
    std::vector<std::byte> out(n, std::byte{0});
    tg::buffer buf = dev.allocate(n);
    buf.copy_in(in.data(), n);
    buf.copy_out(out.data(), n);
    CHECK(out == in);
  }
}

TEST_CASE("a real AMD GPU runs one add kernel") {
  tg::device& dev = card();
  auto& amd = dynamic_cast<tg::amd::am_backend&>(dev.impl());
  const std::vector<std::byte> elf = tg::test::build_add(amd.device().info().gfx_target);
  if (elf.empty()) {
    MESSAGE("kernel part skipped: llc-19 / ld.lld-19 / TG_AMD_KERNELS missing");
    return;
  }
  const tg::amd::code_object co(elf);
  constexpr std::uint32_t groups = 8, group_size = 64, count = groups * group_size;
  std::vector<float> a(count), b(count), sum(count, -1.0f);
  for (std::uint32_t i = 0; i < count; ++i) a[i] = float(i) * 0.5f, b[i] = 1000.0f - float(i);
  tg::buffer da = dev.allocate(4 * count), db = dev.allocate(4 * count), dout = dev.allocate(4 * count);
  da.copy_in(a.data(), 4 * count);
  db.copy_in(b.data(), 4 * count);
  const tg::amd::kernarg args[] = {tg::amd::kernarg_pointer, tg::amd::kernarg_pointer, tg::amd::kernarg_pointer};
  auto add = amd.load_program(co, "add", args, {.workgroups = {groups, 1, 1}, .workgroup_size = {group_size, 1, 1}});
  void* const buffers[] = {dout.data(), da.data(), db.data()};
  add->launch(buffers, {});
  dout.copy_out(sum.data(), 4 * count);  // waits for the kernel
  int bad = 0;
  for (std::uint32_t i = 0; i < count; ++i)
    if (sum[i] != a[i] + b[i] && ++bad <= 5) FAIL_CHECK("element " << i << ": got " << sum[i] << ", want " << a[i] + b[i]);
  CHECK(bad == 0);
}

int main(int argc, char** argv) {
  tg::transport::system_buses buses = tg::transport::real_buses();
  if (tg::transport::list_devices(buses).empty()) {
    std::fprintf(stderr, "skipped: no AMD GPU or ASM2464 bridge on PCI or USB (the hw suite needs a real card)\n");
    return 77;
  }
  doctest::Context context(argc, argv);
  return context.run();
}
