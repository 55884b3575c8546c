// usb_stream_test.cpp: PCIe memory streams are split into bounded chunks with size-scaled timeouts
// (our rule; tinygrad's pcie_mem_write sends one stream), and a failed transfer's message names the request,
// endpoint, size and timeout.
#include <doctest/doctest.h>

#include <numeric>

#include "tests/runtime/transport/usb/fake_bridge.hpp"
#include "runtime/transport/usb/pcie_stream.hpp"
#include "runtime/transport/usb/usb_device.hpp"
#include <tg/core/error.hpp>

using namespace tg::transport::usb;
using tg::transport::usb::testing::fake_backend;
using tg::transport::usb::testing::fake_bridge;
using tg::transport::usb::testing::usb_record;

namespace {

using rig = tg::transport::usb::testing::opened_bridge;

std::uint32_t le32(const std::vector<std::byte>& p, std::size_t at) {
  return std::uint32_t(p[at]) | std::uint32_t(p[at + 1]) << 8 | std::uint32_t(p[at + 2]) << 16 |
         std::uint32_t(p[at + 3]) << 24;
}

std::vector<std::byte> pattern(std::size_t n) {
  std::vector<std::byte> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = std::byte(i * 7 + 3);
  return v;
}

}  // namespace

TEST_CASE("a 200 KiB write with a 64 KiB limit is 4 streams at the right addresses, none above the limit") {
  rig r;
  std::vector<std::byte> data = pattern(200 * 1024);
  const std::uint64_t base = 0x8'4010'0000;  // seed 002's BAR0 + 1 GiB + 1 MiB
  stream_write(r.dev, base, data, stream_limits{});
  REQUIRE(r.bridge.log.size() == 8);
  const std::uint64_t expect_bytes[] = {65536, 65536, 65536, 8192};
  for (int c = 0; c < 4; ++c) {
    const usb_record& setup = r.bridge.log[2 * c];
    const usb_record& data_out = r.bridge.log[2 * c + 1];
    CHECK(setup.request == 0xF0);
    CHECK(setup.value == 0x0F60);  // memory write, 64-bit, all byte enables
    CHECK(setup.index == 1);       // mode 1: streaming write
    std::uint64_t address = le32(setup.out, 0) | std::uint64_t(le32(setup.out, 4)) << 32;
    CHECK(address == base + std::uint64_t(c) * 65536);
    CHECK(le32(setup.out, 8) == expect_bytes[c] / 4);  // dword count
    CHECK(data_out.kind == usb_record::bulk);
    CHECK(data_out.endpoint == 0x02);
    CHECK(data_out.size == expect_bytes[c]);
    // 1000 ms + size at 1 MB/s, rounded up to whole milliseconds.
    CHECK(data_out.timeout.count() == 1000 + std::int64_t((expect_bytes[c] + 999) / 1000));
  }
  for (std::size_t i = 0; i < data.size(); i += 4099) CHECK(r.bridge.memory.at(base + i) == data[i]);
}

TEST_CASE("a read is split the same way and reassembled in order") {
  rig r;
  std::vector<std::byte> data = pattern(72 * 1024);
  for (std::size_t i = 0; i < data.size(); ++i) r.bridge.memory[0x1000'0000 + i] = data[i];
  std::vector<std::byte> out(data.size());
  stream_read(r.dev, 0x1000'0000, out, stream_limits{32 * 1024});
  CHECK(out == data);
  REQUIRE(r.bridge.log.size() == 6);
  CHECK(r.bridge.log[0].value == 0x0F20);
  CHECK(r.bridge.log[0].index == 2);
  CHECK(r.bridge.log[1].endpoint == 0x81);
  CHECK(r.bridge.log[5].size == 8 * 1024);
  // A read waits at least 30 s for its completion (a card in reset answers late), not ~1 s.
  CHECK(r.bridge.log[1].timeout.count() == 30000);
}

TEST_CASE("a bulk OUT that libusb times out becomes a message naming endpoint, size, timeout and address") {
  rig r;
  r.bridge.bulk_out_status = usb_status::timeout;
  std::vector<std::byte> data(65536);
  CHECK_THROWS_WITH_AS(stream_write(r.dev, 0x8'0000'0000, data, stream_limits{}),
                       "usb:3-2: bulk OUT 0x02 of 65536 bytes timed out after 1066 ms (bridge busy or wedged? reset "
                       "the transport); 0 bytes went through; while writing PCIe memory at 0x800000000",
                       tg::device_error);
}

TEST_CASE("a control transfer the bridge refuses names the request, its meaning, wValue and wIndex") {
  rig r;
  std::vector<std::byte> none;
  CHECK_THROWS_WITH_AS(r.dev.control_out(0xF0, 0x0F60, 7, none, std::chrono::milliseconds(5000)),
                       "usb:3-2: control 0xF0 (PCIe TLP) OUT wValue=0x0F60 wIndex=0x0007 of 0 bytes failed: stall "
                       "(endpoint halted or request refused)",
                       tg::device_error);
}

TEST_CASE("unaligned streams and bad chunk limits are usage errors") {
  rig r;
  std::vector<std::byte> six(6);
  CHECK_THROWS_AS(stream_write(r.dev, 0x1000'0000, six, stream_limits{}), tg::usage_error);
  CHECK_THROWS_AS(stream_read(r.dev, 0x1000'0002, std::span(six).first(4), stream_limits{}), tg::usage_error);
  CHECK_THROWS_AS(check_stream_limits(stream_limits{6}), tg::usage_error);
  CHECK_THROWS_AS(check_stream_limits(stream_limits{4}), tg::usage_error);
  CHECK(r.bridge.log.empty());
}

TEST_CASE("the chunk timeout keeps a full chunk safe at the measured 3.6 MB/s") {
  stream_limits l;
  // 64 KiB at 3.6 MB/s takes about 18 ms; the timeout is 1066 ms.
  CHECK(bulk_timeout(l, 65536).count() == 1066);
  CHECK(bulk_timeout(l, 4).count() == 1001);
  CHECK(bulk_timeout(l, 4 << 20).count() == 1000 + 4195);
}
