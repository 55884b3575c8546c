// vram_test.cpp: emulated VRAM and doorbells are memfds a transport can map as BARs.
#include <doctest/doctest.h>
#include <sys/mman.h>

#include "drivers/emu/gpu.hpp"

using namespace tg::emu;

namespace {

// A second shared mapping of a memfd, as a PCI transport would map BAR0 / BAR2.
struct mapping {
  mapping(int fd, std::size_t bytes) : bytes(bytes) {
    p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    REQUIRE(p != MAP_FAILED);
  }
  ~mapping() { ::munmap(p, bytes); }
  template <class T>
  T* at(std::size_t offset) {
    return reinterpret_cast<T*>(static_cast<std::byte*>(p) + offset);
  }
  void* p;
  std::size_t bytes;
};

}  // namespace

TEST_CASE("VRAM is a memfd: a second mapping sees the emulator's writes and the other way round") {
  gpu g({.vram_bytes = 32 << 20});
  mapping bar0(g.vram().fd(), g.vram().size_bytes());
  g.vram().store64({0x10'0008}, 0x0123'4567'89AB'CDEFull);
  CHECK(*bar0.at<std::uint64_t>(0x10'0008) == 0x0123'4567'89AB'CDEFull);
  *bar0.at<std::uint32_t>(0x1F'FFFC) = 0xCAFE'F00Du;
  CHECK(g.vram().load32({0x1F'FFFC}) == 0xCAFE'F00Du);
}

TEST_CASE("VRAM accesses outside the card are usage errors that name the access") {
  vram v(1 << 20);
  std::array<std::byte, 16> buf{};
  CHECK_THROWS_WITH_AS(v.read({(1 << 20) - 8}, buf), "emu vram: read of 16 bytes at 0xffff8 leaves VRAM [0, 0x100000)",
                       tg::usage_error);
  CHECK_THROWS_WITH_AS(v.load64({4}), "emu vram: 64-bit load at 0x4 is not 8-byte aligned", tg::usage_error);
  CHECK_THROWS_AS(v.store32({1 << 20}, 0), tg::usage_error);
  CHECK_THROWS_AS(vram(1000), tg::usage_error);
}

TEST_CASE("VRAM works as the page tables' vram_access") {
  vram v(1 << 20);
  const std::uint64_t words[] = {1, 2, 0xFFFF'FFFF'FFFF'FFFFull};
  tg::memory::vram_access& access = v;
  access.write_words({0x2000}, words);
  std::array<std::uint64_t, 3> back{};
  access.read_words({0x2000}, back);
  CHECK(back[2] == words[2]);
  CHECK(access.read64({0x2008}) == 2);
}

TEST_CASE("the doorbell page is a memfd of 64-bit slots") {
  gpu g({.vram_bytes = 16 << 20});
  mapping bar2(g.doorbell_fd(), 0x2000);
  g.write_doorbell64(0x800, 0x1'0000'0040ull);
  CHECK(*bar2.at<std::uint64_t>(0x800) == 0x1'0000'0040ull);
  *bar2.at<std::uint64_t>(0x18) = 77;
  CHECK(g.read_doorbell64(0x18) == 77);
  CHECK_THROWS_WITH_AS(g.write_doorbell64(0x2000, 1),
                       "emu: doorbell offset 0x2000 is not an 8-byte slot inside the 8192-byte doorbell page",
                       tg::usage_error);
}
