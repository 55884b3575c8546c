// usb_tlp_test.cpp: configuration TLPs through 0xF0: the control setup fields and payload on the
// wire (tinygrad's CustomASM24Controller.pcie_request), completion decoding, the return-status retries and errors.
#include <doctest/doctest.h>

#include "tests/runtime/transport/usb/fake_bridge.hpp"
#include "runtime/transport/usb/tlp.hpp"
#include "runtime/transport/usb/usb_device.hpp"
#include <tg/core/error.hpp>

using namespace tg::transport::usb;
using tg::transport::usb::testing::fake_backend;
using tg::transport::usb::testing::fake_bridge;
using tg::transport::usb::testing::usb_record;

namespace {

std::vector<std::byte> bytes(std::initializer_list<int> v) {
  std::vector<std::byte> out;
  for (int b : v) out.push_back(std::byte(b));
  return out;
}

using rig = tg::transport::usb::testing::opened_bridge;

tlp_retry_policy fast_retry{10, std::chrono::milliseconds(0)};

}  // namespace

// As CustomASM24Controller.pcie_request: byte enables ((1 << size) - 1) << (A & 3) and the config address layout.
static_assert(tlp_byte_enable(4, 0x00) == 0b1111);
static_assert(tlp_byte_enable(2, 0x02) == 0b1100);
static_assert(tlp_byte_enable(1, 0x07) == 0b1000);
static_assert(config_address(4, 0, 0, 0x10) == 0x0400'0010);
static_assert(config_address(1, 3, 2, 0x1FFF) == (1u << 24 | 3u << 19 | 2u << 16 | 0xFFF));
static_assert(!tlp_expects_completion(tlp_fmt::memory_write64));
static_assert(tlp_expects_completion(tlp_fmt::config_write1));
static_assert(tlp_expects_completion(tlp_fmt::memory_read64));
static_assert(!tlp_expects_completion(0x30));  // a message

TEST_CASE("a config read of the GPU vendor id is one 0xF0 OUT and one 8-byte 0xF0 IN with the reference's fields") {
  rig r;
  CHECK(config_read(r.dev, 4, 0x00, 2) == 0x1002);
  REQUIRE(r.bridge.log.size() == 2);
  const usb_record& out = r.bridge.log[0];
  CHECK(out.kind == usb_record::control);
  CHECK(out.request_type == 0x40);
  CHECK(out.request == 0xF0);
  CHECK(out.value == (0x05 | 0b0011 << 8));  // Type 1 config read, byte enables for bytes 0..1
  CHECK(out.index == 0);                      // mode 0: single TLP
  CHECK(out.timeout == std::chrono::milliseconds(5000));
  CHECK(out.out == bytes({0x00, 0x00, 0x00, 0x04, 0, 0, 0, 0, 0, 0, 0, 0}));  // address 4 << 24 LE
  const usb_record& in = r.bridge.log[1];
  CHECK(in.request_type == 0xC0);
  CHECK(in.request == 0xF0);
  CHECK(in.value == 0);
  CHECK(in.index == 0);
  CHECK(in.size == 8);
}

TEST_CASE("a full-dword config read uses all four byte enables") {
  rig r;
  CHECK(config_read(r.dev, 4, 0x00, 4) == 0x744C1002);
  CHECK(r.bridge.log[0].value == 0x0F05);
}

TEST_CASE("a 2-byte config read at offset 2 enables bytes 2..3 of the aligned dword and shifts the result") {
  rig r;
  CHECK(config_read(r.dev, 4, 0x02, 2) == 0x744C);  // device id
  CHECK(r.bridge.log[0].value == (0x05 | 0b1100 << 8));
  CHECK(r.bridge.log[0].out == bytes({0x00, 0x00, 0x00, 0x04, 0, 0, 0, 0, 0, 0, 0, 0}));
}

TEST_CASE("a 1-byte config write on bus 0 is Type 0 with the value in its byte lane") {
  rig r;
  config_write(r.dev, 0, 0x05, 0xAB, 1);
  CHECK(r.bridge.log[0].value == (0x44 | 0b0010 << 8));
  CHECK(r.bridge.log[0].out == bytes({0x04, 0, 0, 0, 0, 0, 0, 0, 0x00, 0xAB, 0x00, 0x00}));
  CHECK(r.bridge.log.size() == 2);  // config writes are non-posted: the completion is fetched
  CHECK(r.bridge.config[0][5] == 0xAB);
}

TEST_CASE("completion return status is retried: three failures then success reads the value") {
  rig r;
  r.bridge.tlp_return_failures = 3;
  CHECK(config_read(r.dev, 4, 0x00, 2, fast_retry) == 0x1002);
  CHECK(r.bridge.log.size() == 8);  // four OUT + IN pairs: the whole request is re-issued
}

TEST_CASE("completion return status failing 11 times is a TLP error after retries") {
  rig r;
  r.bridge.tlp_return_failures = 11;
  CHECK_THROWS_WITH_AS(config_read(r.dev, 4, 0x00, 2, fast_retry),
                       "usb:3-2: PCIe config read type 1 (fmt 0x05) of 2 bytes at 0x04000000: TLP error after "
                       "retries (return status 0x01 on each of 11 attempts)",
                       tg::device_error);
  CHECK(r.bridge.log.size() == 22);
}

TEST_CASE("ten failures are within the retries") {
  rig r;
  r.bridge.tlp_return_failures = 10;
  CHECK(config_read(r.dev, 4, 0x00, 4, fast_retry) == 0x744C1002);
}

TEST_CASE("completion status 1 is reported as Unsupported Request") {
  rig r;
  r.bridge.completion_status = 1;
  CHECK_THROWS_WITH_AS(config_read(r.dev, 4, 0x00, 4),
                       "usb:3-2: PCIe config read type 1 (fmt 0x05) of 4 bytes at 0x04000000 completed with status "
                       "1 (Unsupported Request)",
                       tg::device_error);
}

TEST_CASE("completion bytes decode as data LE, status in byte 4 bits 7:5, return status in byte 7") {
  std::array<std::byte, 8> reply{std::byte(0x78), std::byte(0x56), std::byte(0x34), std::byte(0x12),
                                 std::byte(0x80), std::byte(0),    std::byte(0),    std::byte(3)};
  tlp_completion c = decode_completion(reply);
  CHECK(c.data == 0x12345678);
  CHECK(c.status == 4);
  CHECK(c.return_status == 3);
  CHECK(std::string(completion_status_name(2)) == "Configuration Request Retry Status");
}

TEST_CASE("a single TLP that crosses a dword is a usage error") {
  rig r;
  CHECK_THROWS_AS(config_read(r.dev, 4, 0x03, 2), tg::usage_error);
  CHECK_THROWS_AS(config_read(r.dev, 4, 0x00, 3), tg::usage_error);
  CHECK(r.bridge.log.empty());
}
