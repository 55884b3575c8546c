// emu_device_test.cpp: the "AMD:EMU" backend through tg::device: registration, SDMA copies in
// bounded chunks through staging, and a kernel built from LLVM IR at test time (llc-19, ld.lld-19),
// loaded with drivers/amd/code_object and run as its host twin. Exits 77 (skipped) when the LLVM
// tools are missing and everything else passed (TG_LLC, TG_LLD and TG_AMD_KERNELS name them).
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include <unistd.h>

#include "drivers/emu/emu_device.hpp"
#include "runtime/device/device.hpp"

namespace fs = std::filesystem;
using namespace tg::emu;

namespace {

std::string env_or(const char* name, const char* fallback) {
  const char* v = std::getenv(name);
  return v && *v ? v : fallback;
}

bool tools_missing = false;  // set by the LLVM test; main turns it into 77

bool run(const std::string& cmd) { return std::system((cmd + " >/dev/null 2>&1").c_str()) == 0; }

// kernels/add.ll built for `mcpu` into a shared object; empty when the tools are not there.
std::vector<std::byte> build_add(const std::string& mcpu) {
  const std::string llc = env_or("TG_LLC", "llc-19"), lld = env_or("TG_LLD", "ld.lld-19");
  const fs::path kernels = env_or("TG_AMD_KERNELS", "");
  if (kernels.empty() || !run(llc + " --version") || !run(lld + " --version")) return {};
  const fs::path dir = fs::temp_directory_path() / ("tg_emu_device_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const fs::path obj = dir / ("add_" + mcpu + ".o"), so = dir / ("add_" + mcpu + ".so");
  const std::string quote = "'";
  REQUIRE(run(llc + " -mtriple=amdgcn-amd-amdhsa -mcpu=" + mcpu + " -filetype=obj -o " + quote + obj.string() + quote +
              " " + quote + (kernels / "add.ll").string() + quote));
  REQUIRE(run(lld + " -shared " + quote + obj.string() + quote + " -o " + quote + so.string() + quote));
  std::ifstream in(so, std::ios::binary);
  std::vector<char> c((std::istreambuf_iterator<char>(in)), {});
  fs::remove_all(dir);
  std::vector<std::byte> bytes(c.size());
  std::memcpy(bytes.data(), c.data(), c.size());
  return bytes;
}

// The host twin of kernels/add.ll's `add`: out[i] = a[i] + b[i] for every thread of the grid.
void add_twin(dispatch_context& ctx) {
  const auto out = ctx.kernarg<gpu_va>(0), a = ctx.kernarg<gpu_va>(8), b = ctx.kernarg<gpu_va>(16);
  const std::uint64_t threads = std::uint64_t(ctx.workgroups()[0]) * ctx.workgroup_size()[0];
  for (std::uint64_t i = 0; i < threads; ++i) ctx.store(out + 4 * i, ctx.load<float>(a + 4 * i) + ctx.load<float>(b + 4 * i));
}

}  // namespace

TEST_CASE("AMD:EMU is registered as the AMD backend and refuses other arguments") {
  tg::device dev("AMD:EMU");
  CHECK(dev.impl().name() == "AMD:EMU");
  CHECK(dynamic_cast<emu_device*>(&dev.impl()) != nullptr);
  CHECK_THROWS_AS(tg::device("AMD:PCI"), tg::usage_error);
  CHECK_THROWS_WITH_AS(dev.impl().compile({{}, 0, "k"}), doctest::Contains("no AMD code generator"), tg::usage_error);
}

TEST_CASE("copies in and out go through SDMA in bounded chunks and are bit-exact") {
  for (const char* name : {"AMD:EMU:gfx11", "AMD:EMU:gfx12"}) {
    CAPTURE(name);
    tg::device dev(name);
    auto& emu = dynamic_cast<emu_device&>(dev.impl());
    const std::size_t n = 3 * emu_device::staging_bytes + 12345;  // several chunks and a ragged tail
    std::vector<std::byte> in(n), out(n);
    std::mt19937 rng(7);
    for (auto& b : in) b = std::byte(rng());
    tg::buffer buf = dev.allocate(n);
    const std::uint64_t sdma_before = emu.driver().device().stats().sdma_packets;
    buf.copy_in(in.data(), n);
    buf.copy_out(out.data(), n);
    CHECK(std::memcmp(in.data(), out.data(), n) == 0);
    CHECK(emu.driver().device().stats().sdma_packets > sdma_before + 8);  // it was SDMA, chunk by chunk
    // A copy into the middle of a buffer, and back out of it.
    const std::uint32_t marker = 0xC0FFEE11;
    emu.copy_in(static_cast<std::byte*>(buf.data()) + 4096, &marker, 4);
    std::uint32_t back = 0;
    emu.copy_out(&back, static_cast<std::byte*>(buf.data()) + 4096, 4);
    CHECK(back == marker);
    CHECK_THROWS_AS(emu.copy_in(static_cast<std::byte*>(buf.data()) + n, &marker, 4096 * 8), tg::usage_error);
    CHECK(emu.driver().device().faults().empty());
  }
}

TEST_CASE("a code object built from LLVM IR runs as its host twin: add is bit-exact") {
  for (auto [name, mcpu] : {std::pair{"AMD:EMU:gfx11", "gfx1100"}, std::pair{"AMD:EMU:gfx12", "gfx1200"}}) {
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
        emu.load_program(co, "add", args, {.workgroups = {groups, 1, 1}, .workgroup_size = {group_size, 1, 1}}, add_twin);
    void* const buffers[] = {dout.data(), da.data(), db.data()};
    add->launch(buffers, {});
    dout.copy_out(out.data(), 4 * n);
    dev.synchronize();

    std::vector<float> want(n);
    for (std::uint32_t i = 0; i < n; ++i) want[i] = a[i] + b[i];
    CHECK(std::memcmp(out.data(), want.data(), 4 * n) == 0);
    CHECK(emu.driver().device().stats().dispatches == 1);
    CHECK(emu.driver().device().faults().empty());
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
