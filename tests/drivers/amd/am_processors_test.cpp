// am_processors_test.cpp: the AM driver boots the emulated RX 7800 XT (gfx1101: GC 11.0.3, MP0/MP1
// 13.0.10, SDMA 6.0.3) and RX 9070 XT (gfx1201: GC 12.0.1, MP0/MP1 14.0.3, SDMA 7.0.1) as it boots
// the first card of each generation: the versions it reads from their discovery tables, the
// processor name it derives (amdkfd/kfd_device.c: kgd2kfd_probe), the firmware files it asks for
// (the MODULE_FIRMWARE names of gfx_v11_0.c, psp_v13_0.c, smu_v13_0.c, sdma_v6_0.c and their v12 /
// v14 / v7 peers), and GC 11.0.3's own GC hub registers (gmc_v11_0.c: gfxhub_v3_0_3.c).
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <optional>
#include <span>
#include <memory>
#include <string>
#include <vector>

#include <tg/core/error.hpp>

#include "drivers/amd/am_device.hpp"
#include "drivers/amd/am_firmware.hpp"
#include "drivers/amd/regs/gc_11_0_0.hpp"
#include "drivers/amd/regs/gc_11_0_3.hpp"
#include "drivers/emu/firmware/emu_firmware.hpp"
#include "drivers/emu/machine/emulated_machine.hpp"
#include "runtime/queue/pm4.hpp"
#include "tests/drivers/amd/am_dispatch.hpp"

using namespace tg;
using namespace std::chrono_literals;
using amd::ip_version;

namespace {

struct card {
  const char* processor;
  emu::gfx_gen gen;
  ip_version gc, sdma, mp;
  const char* firmware[4];  // psp, smu, sdma, one of gc's
};

const card rx_7800_xt{"gfx1101", emu::gfx_gen::gfx11, {11, 0, 3}, {6, 0, 3}, {13, 0, 10},
                      {"psp_13_0_10_sos.bin", "smu_13_0_10.bin", "sdma_6_0_3.bin", "gc_11_0_3_mec.bin"}};
const card rx_9070_xt{"gfx1201", emu::gfx_gen::gfx12, {12, 0, 1}, {7, 0, 1}, {14, 0, 3},
                      {"psp_14_0_3_sos.bin", "smu_14_0_3.bin", "sdma_7_0_1.bin", "gc_12_0_1_mec.bin"}};

emu::emulated_machine_config config_of(const card& c, emu::emulated_bus bus) {
  return {.gen = c.gen, .processor = c.processor, .vram_bytes = 512ull << 20, .bus = bus};
}

// A RELEASE_MEM round trip on the compute queue and an SDMA copy there and back.
void check_queues_run(amd::am_device& dev) {
  amd::allocation target = dev.allocate(4096);
  queue::cmd_buffer cb;
  queue::pm4::emit_release_mem(cb, {.gcr = queue::pm4::release_gcr_flush,
                                    .data = queue::pm4::data_sel::value32,
                                    .address = target.va,
                                    .value = 0xB007});
  dev.compute().submit(cb);
  dev.synchronize(5000ms);
  std::uint32_t seen = 0;
  dev.copy_out(std::as_writable_bytes(std::span(&seen, 1)), target, 0);
  CHECK(seen == 0xB007u);
  std::vector<std::byte> in(8192, std::byte{0x3C}), out(8192);
  amd::allocation a = dev.allocate(8192);
  dev.copy_in(a, 0, in);
  dev.copy_out(out, a, 0);
  CHECK(out == in);
  dev.release(a);
  dev.release(target);
}

void check_boot(const card& c, emu::emulated_bus bus) {
  CAPTURE(std::string(c.processor));
  emu::emulated_machine m(config_of(c, bus));
  CHECK(m.device().chip().target == c.processor);
  for (int session = 0; session < 2; ++session) {  // full, then warm
    std::unique_ptr<transport::device_transport> t = transport::open_transport("AMD", m.buses());
    amd::am_device dev(*t, test::options_for(m));
    CHECK(dev.info().warm_boot == (session == 1));
    CHECK(dev.info().gfx_target == c.processor);
    CHECK(dev.info().gc == c.gc);
    CHECK(dev.info().sdma0 == c.sdma);
    CHECK(dev.info().mp0 == c.mp);
    CHECK(dev.info().mp1 == c.mp);
    CHECK(dev.gfx() == (c.gen == emu::gfx_gen::gfx12 ? queue::pm4::gfx_version::gfx12 : queue::pm4::gfx_version::gfx11));
    for (const emu::psp_command& p : m.device().psp_log()) CHECK_MESSAGE(p.problem.empty(), p.problem);
    check_queues_run(dev);
    CHECK(m.device().faults().empty());
  }
}

}  // namespace

TEST_CASE("the discovery table of each emulated card lists the versions of a real one, and the driver reads them") {
  for (const card& c : {rx_7800_xt, rx_9070_xt}) {
    CAPTURE(std::string(c.processor));
    emu::emulated_machine m(config_of(c, emu::emulated_bus::pci));
    std::unique_ptr<transport::device_transport> t = transport::open_transport("AMD", m.buses());
    const amd::discovery d = amd::read_discovery(*t);
    const emu::personality& chip = m.device().chip();
    CHECK(d.gfx_target() == c.processor);
    for (auto [hw, v] : {std::pair{amd::hw_id::gc, chip.gc}, {amd::hw_id::sdma0, chip.sdma}, {amd::hw_id::mmhub, chip.mmhub},
                         {amd::hw_id::nbif, chip.nbio}, {amd::hw_id::mp0, chip.mp0}, {amd::hw_id::mp1, chip.mp1},
                         {amd::hw_id::hdp, chip.hdp}, {amd::hw_id::osssys, chip.osssys}}) {
      CAPTURE(amd::hw_name(hw));
      CHECK(d.version_of(hw) == ip_version{v.major, v.minor, v.revision});
    }
    CHECK(d.version_of(amd::hw_id::gc) == c.gc);
    CHECK(d.version_of(amd::hw_id::sdma0) == c.sdma);
    CHECK(d.version_of(amd::hw_id::mp0) == c.mp);
    // Navi 32 / Navi 48 siblings of Navi 31 / Navi 44 (personality.cpp says which are unconfirmed).
    CHECK(d.version_of(amd::hw_id::mmhub) == (c.gen == emu::gfx_gen::gfx12 ? ip_version{4, 1, 0} : ip_version{3, 0, 0}));
    CHECK(d.version_of(amd::hw_id::nbif) == (c.gen == emu::gfx_gen::gfx12 ? ip_version{6, 3, 1} : ip_version{4, 3, 0}));
  }
}

TEST_CASE("the driver asks for the Linux firmware names of GC 11.0.3 / MP 13.0.10 / SDMA 6.0.3 and GC 12.0.1 / "
          "MP 14.0.3 / SDMA 7.0.1, which the emulator's firmware set provides") {
  for (const card& c : {rx_7800_xt, rx_9070_xt}) {
    CAPTURE(std::string(c.processor));
    emu::emulated_machine m({.gen = c.gen, .processor = c.processor, .vram_bytes = 512ull << 20, .write_firmware = false});
    std::unique_ptr<transport::device_transport> t = transport::open_transport("AMD", m.buses());
    const amd::firmware_versions v = amd::firmware_versions_of(amd::read_discovery(*t));
    // An empty folder: the error names the first file the driver wants.
    CHECK_THROWS_WITH_AS(amd::load_firmware(m.firmware_dir(), v), doctest::Contains(c.firmware[0]), device_error);
    // The emulator's set for the processor: every file is there, with the names Linux uses.
    const std::vector<std::filesystem::path> written = emu::write_firmware_images(m.firmware_dir(), c.processor, 5);
    std::vector<std::string> names;
    for (const auto& p : written) names.push_back(p.filename().string());
    for (const char* f : c.firmware) CHECK(std::find(names.begin(), names.end(), f) != names.end());
    const amd::firmware_set fw = amd::load_firmware(m.firmware_dir(), v);
    std::string whats;
    for (const amd::ip_firmware& i : fw.ip) whats += i.what + "; ";
    for (const char* f : {c.firmware[1], c.firmware[2], c.firmware[3]}) CHECK_MESSAGE(whats.find(f) != std::string::npos, whats);
  }
  // A folder with only the first cards' files does not boot the new ones.
  emu::emulated_machine m({.gen = emu::gfx_gen::gfx11, .processor = "gfx1101", .vram_bytes = 512ull << 20,
                           .write_firmware = false});
  emu::write_firmware_images(m.firmware_dir(), "gfx1100", 5);
  std::unique_ptr<transport::device_transport> t = transport::open_transport("AMD", m.buses());
  CHECK_THROWS_WITH_AS(amd::am_device(*t, test::options_for(m)), doctest::Contains("psp_13_0_10_sos.bin"), device_error);
}

TEST_CASE("the emulated RX 7800 XT (gfx1101) boots fully and warm over PCI and runs both queues") {
  check_boot(rx_7800_xt, emu::emulated_bus::pci);
}

TEST_CASE("the emulated RX 9070 XT (gfx1201) boots fully and warm over PCI and runs both queues") {
  check_boot(rx_9070_xt, emu::emulated_bus::pci);
}

TEST_CASE("the emulated RX 7800 XT boots behind the emulated USB bridge") { check_boot(rx_7800_xt, emu::emulated_bus::usb); }

TEST_CASE("GC 11.0.3 programs the GC hub at gc_11_0_3_offset.h's registers, not 11.0.0's (gmc_v11_0.c: "
          "gfxhub_v3_0_3)") {
  namespace regs = amd::regs;
  const queue::reg_info& base_0 = regs::gc_11_0_0::table.reg("regGCVM_CONTEXT0_PAGE_TABLE_BASE_ADDR_LO32");
  const queue::reg_info& base_3 = regs::gc_11_0_3::table.reg("regGCVM_CONTEXT0_PAGE_TABLE_BASE_ADDR_LO32");
  CHECK(base_3.offset == base_0.offset + 0x10);  // gc_11_0_3_offset.h 0x1703, gc_11_0_0_offset.h 0x16f3
  CHECK(regs::gc_11_0_3::table.reg("regCP_HQD_ACTIVE").offset == regs::gc_11_0_0::table.reg("regCP_HQD_ACTIVE").offset);
  emu::emulated_machine m(config_of(rx_7800_xt, emu::emulated_bus::pci));
  CHECK(m.device().chip().gc_reg.vm_pt_base_lo == 0x1260 + base_3.offset);
  std::unique_ptr<transport::device_transport> t = transport::open_transport("AMD", m.buses());
  amd::am_device dev(*t, test::options_for(m));
  CHECK((m.device().read_register(0x1260 + base_3.offset) & 1) == 1);  // the root table, valid bit set
  // Where an 11.0.0 layout would put the root table is GCVM_INVALIDATE_ENG10_ADDR_RANGE_LO32 on 11.0.3,
  // which the driver sets to all ones (gfxhub_v3_0_3_program_invalidation).
  CHECK(regs::gc_11_0_3::table.reg("regGCVM_INVALIDATE_ENG10_ADDR_RANGE_LO32").offset == base_0.offset);
  CHECK(m.device().read_register(0x1260 + base_0.offset) == 0xFFFFFFFFu);
}

TEST_CASE("a kernel compiled for gfx1101 runs on the emulated gfx1101, with an unpadded USER_SGPR_COUNT") {
  emu::emulated_machine m(config_of(rx_7800_xt, emu::emulated_bus::pci));
  std::unique_ptr<transport::device_transport> t = transport::open_transport("AMD", m.buses());
  amd::am_device dev(*t, test::options_for(m));
  std::optional<test::am_kernel> inc = test::load_kernel(dev, "increment", "increment");
  if (!inc) return;
  CHECK(inc->co.processor() == "gfx1101");
  CHECK(inc->co.kernel("increment").descriptor.user_sgpr_count() == 2);  // the kernarg pointer alone
  amd::allocation counter = dev.allocate(4096), kernargs = dev.allocate(4096);
  const std::uint32_t start = 41;
  const std::uint64_t pointer = counter.va.value;
  dev.copy_in(counter, 0, std::as_bytes(std::span(&start, 1)));
  dev.copy_in(kernargs, 0, std::as_bytes(std::span(&pointer, 1)));
  const std::uint64_t dispatches = m.device().stats().dispatches;
  dev.compute().submit(test::one_group_dispatch(dev, *inc, kernargs));
  dev.synchronize(5000ms);
  std::uint32_t seen = 0;
  dev.copy_out(std::as_writable_bytes(std::span(&seen, 1)), counter, 0);
  CHECK(seen == 42u);
  CHECK(m.device().stats().dispatches == dispatches + 1);
  CHECK(m.device().faults().empty());
}
