// posix_pci_os_test.cpp: the POSIX pci_os and the PCI transport over a temp-dir tree of plain
// files laid out as Linux sysfs lays out /sys/bus/pci/devices (Linux Documentation/PCI/sysfs-pci.rst).
#include <doctest/doctest.h>
#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "runtime/transport/pci/pci_devices.hpp"
#include "runtime/transport/pci/pci_text.hpp"
#include "runtime/transport/pci/pci_transport.hpp"
#include "runtime/transport/pci/posix_pci_os.hpp"
#include <tg/core/error.hpp>

using namespace tg::transport;
using namespace tg::transport::pci;
namespace fs = std::filesystem;

namespace {

// A throw-away sysfs: <root>/devices/<bus>/..., <root>/drivers/<name>, lock files in <root>.
struct fake_sysfs {
  fake_sysfs() {
    std::string pattern = (fs::temp_directory_path() / "tg_pci_test_XXXXXX").string();
    REQUIRE(::mkdtemp(pattern.data()) != nullptr);
    root = pattern;
    fs::create_directories(root / "devices");
  }
  ~fake_sysfs() { fs::remove_all(root); }

  static void put(const fs::path& p, const std::string& text) { std::ofstream(p) << text; }
  static std::string get(const fs::path& p) {
    std::ifstream in(p);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }

  // A function with identity files only (what discovery reads).
  fs::path add(const std::string& bus, std::uint16_t vendor, std::uint16_t device) {
    const fs::path dev = root / "devices" / bus;
    fs::create_directories(dev);
    char buf[16];
    std::snprintf(buf, sizeof buf, "0x%04x\n", vendor);
    put(dev / "vendor", buf);
    std::snprintf(buf, sizeof buf, "0x%04x\n", device);
    put(dev / "device", buf);
    return dev;
  }

  // A GPU the transport can open: config, enable, resource and small resourceN files.
  fs::path add_gpu(const std::string& bus, std::uint16_t device) {
    const fs::path dev = add(bus, 0x1002, device);
    put(dev / "enable", "0\n");
    put(dev / "reset", "");
    std::string config(256, '\0');
    config[0] = 0x02, config[1] = 0x10, config[2] = char(device & 0xFF), config[3] = char(device >> 8);
    put(dev / "config", config);
    put(dev / "resource",
        "0x0000008000000000 0x00000080000fffff 0x000000000014220c\n"
        "0x0000000000000000 0x0000000000000000 0x0000000000000000\n"
        "0x00000000e0800000 0x00000000e0801fff 0x0000000000040200\n"
        "0x0000000000000000 0x0000000000000000 0x0000000000000000\n"
        "0x0000000000000000 0x0000000000000000 0x0000000000000000\n"
        "0x00000000e0000000 0x00000000e000ffff 0x0000000000040200\n"
        "0x0000000000000000 0x0000000000000000 0x0000000000000000\n");
    for (auto [index, bytes] : {std::pair{0, 1 << 20}, {2, 0x2000}, {5, 0x10000}}) {
      const fs::path p = dev / ("resource" + std::to_string(index));
      put(p, "");
      fs::resize_file(p, bytes);
    }
    return dev;
  }

  void bind(const std::string& bus, const std::string& driver) {
    fs::create_directories(root / "drivers" / driver);
    put(root / "drivers" / driver / "unbind", "");
    fs::create_directory_symlink(root / "drivers" / driver, root / "devices" / bus / "driver");
  }

  std::shared_ptr<posix_pci_os> os() const {
    return std::make_shared<posix_pci_os>(
        posix_pci_os_options{.sysfs_root = (root / "devices").string(), .lock_dir = root.string()});
  }

  fs::path root;
};

}  // namespace

TEST_CASE("sysfs hex and resource text parse as the kernel prints them") {
  CHECK(parse_hex("0x1002\n") == 0x1002u);
  CHECK(parse_hex("0000000000003f00\n") == 0x3F00u);
  CHECK_FALSE(parse_hex("").has_value());
  CHECK_FALSE(parse_hex("0xZZ").has_value());
  const auto bars = parse_resource("0x0000008000000000 0x000000801fffffff 0x000000000014220c\n"
                                   "0x0000000000000000 0x0000000000000000 0x0000000000000000\n");
  REQUIRE(bars.has_value());
  REQUIRE(bars->size() == 2);
  CHECK((*bars)[0].bus_address == 0x80'0000'0000ull);
  CHECK((*bars)[0].size == 512ull << 20);
  CHECK((*bars)[0].is_64bit);
  CHECK((*bars)[0].prefetchable);
  CHECK((*bars)[1].size == 0);
  CHECK_FALSE(parse_resource("0x0 0x1\n").has_value());
}

TEST_CASE("discovery keeps known AMD GPUs, sorted by bus id, and says which driver is bound") {
  fake_sysfs sys;
  sys.add("0000:c3:00.0", 0x1002, 0x7590);  // RX 9060 XT
  sys.add("0000:03:00.0", 0x1002, 0x744C);  // RX 7900 XTX
  sys.add("0000:03:00.1", 0x1002, 0xAB30);  // its HDMI audio: AMD, but not a GPU we know
  sys.add("0000:00:1f.3", 0x8086, 0x744C);  // another vendor with a colliding device id
  sys.add("0001:01:00.0", 0x1002, 0x7550);  // RX 9070 XT in a second domain
  fs::create_directories(sys.root / "devices" / "0000:05:00.0");  // no vendor file: skipped
  sys.bind("0000:03:00.0", "amdgpu");

  const std::vector<device_entry> found = list_pci_devices(*sys.os());
  REQUIRE(found.size() == 3);
  CHECK(found[0].name == "pci:0000:03:00.0");
  CHECK(found[0].vendor_id == 0x1002);
  CHECK(found[0].device_id == 0x744C);
  CHECK(found[0].detail == "Navi31 RX 7900 XT/XTX (gfx1100), driver amdgpu bound");
  CHECK(found[1].name == "pci:0000:c3:00.0");
  CHECK(found[1].detail == "Navi44 RX 9060 XT (gfx1200), no driver bound");
  CHECK(found[2].name == "pci:0001:01:00.0");
  CHECK(found[2].kind == transport_kind::pci);
}

TEST_CASE("a missing sysfs folder lists nothing") {
  posix_pci_os os({.sysfs_root = "/nonexistent/tg/devices"});
  CHECK(list_pci_devices(os).empty());
}

TEST_CASE("opening through plain files enables the device, sets bus mastering and maps the BARs") {
  fake_sysfs sys;
  const fs::path dev = sys.add_gpu("0000:03:00.0", 0x744C);
  pci_transport t(sys.os(), "0000:03:00.0");
  CHECK(fake_sysfs::get(dev / "enable") == "1");
  CHECK(t.config_read(0x00, 4) == 0x744C'1002u);
  CHECK(t.config_read(0x04, 2) == 0x6);  // MEMORY | MASTER written to `config`
  CHECK(t.bar_info(0).bus_address == 0x80'0000'0000ull);
  CHECK(t.bar_info(0).size == 1 << 20);
  CHECK(t.bar_info(5).size == 0x10000);

  t.bar(5).write32(0xDE3 * 4, 0xCAFE);
  t.bar(2).write64(0x18, 0x1122'3344'5566'7788ull);
  t.bar(0).write32(0xFFFFC, 9);
  const std::string bar5 = fake_sysfs::get(dev / "resource5");
  const std::string bar2 = fake_sysfs::get(dev / "resource2");
  const std::string bar0 = fake_sysfs::get(dev / "resource0");
  std::uint32_t v32 = 0;
  std::uint64_t v64 = 0;
  std::memcpy(&v32, bar5.data() + 0xDE3 * 4, 4);
  CHECK(v32 == 0xCAFE);
  std::memcpy(&v64, bar2.data() + 0x18, 8);
  CHECK(v64 == 0x1122'3344'5566'7788ull);
  std::memcpy(&v32, bar0.data() + 0xFFFFC, 4);
  CHECK(v32 == 9);

  t.reset();
  CHECK(fake_sysfs::get(dev / "reset") == "1");
  CHECK(t.bar(5).read32(0xDE3 * 4) == 0xCAFE);
}

TEST_CASE("BAR0 resize writes the largest supported size index, and a refusal is ignored") {
  fake_sysfs sys;
  const fs::path dev = sys.add_gpu("0000:03:00.0", 0x744C);
  SUBCASE("largest size") {
    fake_sysfs::put(dev / "resource0_resize", "0000000000003f00\n");  // 256 MiB .. 8 GiB
    pci_transport t(sys.os(), "0000:03:00.0");
    CHECK(fake_sysfs::get(dev / "resource0_resize") == "13");
  }
  SUBCASE("unreadable text") {
    fake_sysfs::put(dev / "resource0_resize", "busy\n");
    CHECK_NOTHROW(pci_transport(sys.os(), "0000:03:00.0"));
  }
}

TEST_CASE("a bound driver is refused with the unbind commands, and a failed unbind is reported") {
  fake_sysfs sys;
  sys.add_gpu("0000:03:00.0", 0x744C);
  sys.bind("0000:03:00.0", "amdgpu");
  const std::string dev = (sys.root / "devices" / "0000:03:00.0").string();
  CHECK_THROWS_WITH_AS(pci_transport(sys.os(), "0000:03:00.0"),
                       ("pci: driver amdgpu is bound to 0000:03:00.0; unbind it with `echo 0000:03:00.0 | sudo tee " +
                        dev + "/driver/unbind` or `sudo modprobe -r amdgpu` (every GPU it drives), or open with "
                              "unbind_driver = true").c_str(),
                       tg::device_error);
  // Plain files cannot unbind: the transport writes the bus id and sees the link still there.
  CHECK_THROWS_WITH_AS(pci_transport(sys.os(), "0000:03:00.0", {.unbind_driver = true}),
                       ("pci: driver amdgpu is still bound to 0000:03:00.0 after writing 0000:03:00.0 to " + dev +
                        "/driver/unbind").c_str(),
                       tg::device_error);
  CHECK(fake_sysfs::get(sys.root / "drivers" / "amdgpu" / "unbind") == "0000:03:00.0");
}

TEST_CASE("no write access to enable is refused with what to do") {
  if (::geteuid() == 0) {
    MESSAGE("skipped: root ignores file permissions (the emulated host's switch tests the same message)");
    return;
  }
  fake_sysfs sys;
  const fs::path dev = sys.add_gpu("0000:03:00.0", 0x744C);
  fs::permissions(dev / "enable", fs::perms::owner_read);
  const std::string path = (dev / "enable").string();
  CHECK_THROWS_WITH_AS(pci_transport(sys.os(), "0000:03:00.0"),
                       ("pci: no write access to " + path + " (Permission denied): run as root or grant write access "
                        "to " + path + " and the device's other sysfs files").c_str(),
                       tg::device_error);
}

TEST_CASE("a second open of the same device fails with the lock file's name while the first is open") {
  fake_sysfs sys;
  sys.add_gpu("0000:03:00.0", 0x744C);
  const std::string lock = (sys.root / "am_0000:03:00.0.lock").string();
  {
    pci_transport first(sys.os(), "0000:03:00.0");
    CHECK(fs::exists(lock));
    // flock locks belong to the open file, so a second open in this process conflicts too.
    CHECK_THROWS_WITH_AS(pci_transport(sys.os(), "0000:03:00.0"),
                         ("pci: failed to acquire lock file " + lock + ": another process (or another transport in "
                          "this one) has 0000:03:00.0 open; close it first").c_str(),
                         tg::device_error);
  }
  CHECK_NOTHROW(pci_transport(sys.os(), "0000:03:00.0"));
}

TEST_CASE("opening an unknown device or an index past the list is a usage error") {
  fake_sysfs sys;
  sys.add("0000:00:1f.3", 0x8086, 0x1234);
  sys.add_gpu("0000:03:00.0", 0x744C);
  CHECK_THROWS_WITH_AS(pci_transport(sys.os(), "0000:00:1f.3"),
                       "pci: 0000:00:1f.3 (vendor 0x8086, device 0x1234) is not a GPU tg supports; `tg-amd list` "
                       "shows those that are",
                       tg::usage_error);
  CHECK_THROWS_WITH_AS(open_pci_device(sys.os(), 1), "pci: no supported GPU at index 1: found 1 (pci:0000:03:00.0)",
                       tg::usage_error);
}

TEST_CASE("DMA memory is locked host memory with pagemap addresses, or a clear error") {
  posix_pci_os os;
  try {
    std::unique_ptr<dma_region> r = os.allocate_dma(2 * 4096);
    const std::vector<std::uint64_t> pages = r->page_bus_addresses();
    REQUIRE(pages.size() == 2);
    CHECK(pages[0] != 0);
    CHECK(pages[0] % 4096 == 0);
    CHECK(pages[0] != pages[1]);
    const std::uint32_t v = 0xA5A5'5A5A;
    r->write(4096, std::as_bytes(std::span(&v, 1)));
    std::uint32_t got = 0;
    std::memcpy(&got, r->mapping() + 4096, 4);
    CHECK(got == v);
  } catch (const tg::device_error& e) {
    // Without CAP_SYS_ADMIN pagemap hides PFNs; without a memlock allowance mlock fails.
    const std::string what = e.what();
    MESSAGE("DMA not available here: " << what);
    CHECK((what.find("CAP_SYS_ADMIN") != std::string::npos || what.find("mlock") != std::string::npos));
  }
  CHECK_THROWS_WITH_AS(os.allocate_dma(5000), "pci: DMA allocation of 5000 bytes is not a positive multiple of 4 KiB",
                       tg::usage_error);
}
