// am_discovery_test.cpp: the IP discovery parser against tables built from Linux discovery.h.
#include <doctest/doctest.h>

#include <tg/core/error.hpp>

#include "tests/drivers/amd/discovery_bytes.hpp"
#include "drivers/amd/am_discovery.hpp"

using namespace tg::amd;
using tg::test::build_discovery;
using tg::test::gfx11_ips;

TEST_CASE("a good table gives every IP block with its version and register bases") {
  const discovery d = parse_discovery(build_discovery(gfx11_ips(), false), "test");
  CHECK(d.ips.size() == 8);
  const ip_block& gc = d.require(hw_id::gc);
  CHECK(gc.version == ip_version{11, 0, 0});
  CHECK(gc.bases == std::vector<std::uint64_t>{0x1260, 0xA000});
  CHECK(d.require(hw_id::nbif).bases.at(4) == 0x241B000);
  CHECK(d.version_of(hw_id::mp0).file_tag() == "13_0_0");
  CHECK(d.gfx_target() == "gfx1100");
  CHECK(d.table_version == 4);
  REQUIRE(d.gc.has_value());
  CHECK(d.gc->num_se == 2);
  CHECK(d.gc->cu_per_sh == 8);
  CHECK(d.gc->sh_per_se == 2);
  CHECK(d.gc->wave_size == 32);
  CHECK(d.gc->lds_size_kb == 64);
}

TEST_CASE("64-bit base addresses are read and masked to 30 bits as Linux does") {
  std::vector<tg::test::fake_ip> ips = gfx11_ips();
  ips[0] = {11, 0, 12, 0, 1, {0x1260 | (1ull << 40), 0xA000}};
  const discovery d = parse_discovery(build_discovery(ips, true), "test");
  CHECK(d.require(hw_id::gc).bases == std::vector<std::uint64_t>{0x1260, 0xA000});
  CHECK(d.gfx_target() == "gfx1201");
}

TEST_CASE("the harvest table hides fused-off instances") {
  std::vector<tg::test::fake_ip> ips = gfx11_ips();
  ips.push_back({42, 1, 6, 0, 0, {0x1860}});
  const discovery d = parse_discovery(build_discovery(ips, false, {{42, 1}}), "test");
  CHECK(d.find(hw_id::sdma0, 0) != nullptr);
  CHECK(d.find(hw_id::sdma0, 1) == nullptr);
  CHECK_THROWS_WITH_AS(d.require(hw_id::sdma0, 1),
                       "test: the IP discovery table lists no usable SDMA0 (hw id 42) instance 1; is this an AMD "
                       "gfx11/gfx12 GPU?",
                       tg::device_error);
}

TEST_CASE("a bad binary signature is a usage error naming the offset and both values") {
  std::vector<std::byte> t = build_discovery(gfx11_ips(), false);
  t[0] = std::byte{0};
  CHECK_THROWS_WITH_AS(parse_discovery(t, "gpu0"),
                       "gpu0: bad binary signature at byte 0: 0x28211400, expected 0x28211407 (not a discovery table, "
                       "or read from the wrong VRAM offset?)",
                       tg::usage_error);
}

TEST_CASE("a flipped byte fails the checksum") {
  std::vector<std::byte> t = build_discovery(gfx11_ips(), false);
  t[0x160] ^= std::byte{1};
  CHECK_THROWS_AS(parse_discovery(t, "gpu0"), tg::usage_error);
}

TEST_CASE("a truncated table names the field it could not read") {
  std::vector<std::byte> t = build_discovery(gfx11_ips(), false);
  t.resize(8);
  CHECK_THROWS_WITH_AS(parse_discovery(t, "gpu0"),
                       "gpu0: discovery table truncated: binary_header.binary_size at byte 10 needs 2 bytes but "
                       "the table has 8",
                       tg::usage_error);
}
