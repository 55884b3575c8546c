// queue_mirror_test.cpp: queue memory without a CPU mapping (USB): a mirror carries the
// host shadow to the "device" copy and back, and the queues work through it unchanged.
#include <doctest/doctest.h>

#include <chrono>
#include <cstring>
#include <vector>

#include "tests/runtime/queue/queue_rig.hpp"
#include "runtime/queue/gpu_signal.hpp"
#include "runtime/queue/queue_compute.hpp"

using namespace tg::queue;
using namespace std::chrono_literals;
using tg::test::queue_rig;

namespace {

// A device copy of a whole host shadow; counts what crosses, and by which offset.
struct counting_mirror final : memory_mirror {
  std::span<std::byte> shadow;
  std::vector<std::byte> device;
  struct access {
    std::size_t offset, bytes;
  };
  std::vector<access> pushes, pulls;

  explicit counting_mirror(std::span<std::byte> s) : shadow(s), device(s.size()) {}
  std::size_t offset_of(const std::byte* p) const { return std::size_t(p - shadow.data()); }
  void push(std::span<const std::byte> b) override {
    pushes.push_back({offset_of(b.data()), b.size()});
    std::memcpy(device.data() + offset_of(b.data()), b.data(), b.size());
  }
  void pull(std::span<std::byte> b) override {
    pulls.push_back({offset_of(b.data()), b.size()});
    std::memcpy(b.data(), device.data() + offset_of(b.data()), b.size());
  }
  std::uint32_t device_dword(std::size_t offset) const {
    std::uint32_t w;
    std::memcpy(&w, device.data() + offset, 4);
    return w;
  }
  std::uint64_t device_qword(std::size_t offset) const {
    std::uint64_t w;
    std::memcpy(&w, device.data() + offset, 8);
    return w;
  }
  void set_device_qword(std::size_t offset, std::uint64_t v) { std::memcpy(device.data() + offset, &v, 8); }
};

const cmd_buffer work{0xC0004600, 0x00000407};  // EVENT_WRITE CS_PARTIAL_FLUSH (nvd.h: PACKET3_EVENT_WRITE)

}  // namespace

TEST_CASE("a slice keeps the mirror and a null mirror leaves memory as it was") {
  std::vector<std::byte> bytes(256);
  queue_memory plain{bytes, gpu_va{0x1000}};
  CHECK(plain.slice(8, 8).mirror == nullptr);
  counting_mirror m(bytes);
  queue_memory mirrored{bytes, gpu_va{0x1000}, &m};
  CHECK(mirrored.slice(8, 8).mirror == &m);
  store64(plain, 0, 7);
  CHECK(load64(plain, 0) == 7);
  CHECK(m.pushes.empty());
}

TEST_CASE("a ring submission through a mirror pushes the packet dwords and then the write pointer") {
  queue_rig rig(256);
  // The rig's regions lie back to back in one arena: mirror all of it (ring, page, signal).
  std::span<std::byte> all{rig.ring.host_view.data(), 256 + pointer_page_bytes + 16};
  counting_mirror m(all);
  queue_memory ring{rig.ring.host_view, rig.ring.va, &m};
  queue_memory page{rig.page.host_view, rig.page.va, &m};
  queue_memory signal{rig.signal.host_view, rig.signal.va, &m};
  const ring_pointers p = pointers_in_page(page);
  queue_compute q({.ring = {.name = "compute0", .ring = ring, .rptr = p.rptr, .wptr = p.wptr, .bell = &rig.bell},
                   .signal = signal});
  m.pushes.clear();
  q.submit(work);

  // EVENT_WRITE (2) + RELEASE_MEM (8) reach the device copy, then the write-pointer shadow (10).
  CHECK(m.device_dword(0) == 0xC0004600);
  CHECK(m.device_dword(8) == 0xC0064900);  // RELEASE_MEM header, PACKET3(PACKET3_RELEASE_MEM, 6)
  CHECK(m.device_dword(4 * 7) == 1);       // its value: timeline 1
  const std::size_t wptr_at = 256 + pointer_page_wptr_offset;
  CHECK(m.device_qword(wptr_at) == 10);
  REQUIRE(!m.pushes.empty());
  std::size_t ring_bytes_pushed = 0;
  for (auto a : m.pushes)
    if (a.offset < 256) ring_bytes_pushed += a.bytes;
  CHECK(ring_bytes_pushed == 40);
  CHECK(m.pushes.back().offset == wptr_at);  // the shadow is published last, before the doorbell
  CHECK(m.pushes.back().bytes == 8);
  CHECK(rig.bell.writes == 1);
}

TEST_CASE("a signal wait pulls the value from the device copy") {
  std::vector<std::byte> shadow(64);
  counting_mirror m(shadow);
  gpu_signal s("queue sdma0", "timeline", queue_memory{shadow, gpu_va{0x2000}, &m}.slice(16, 16));
  m.set_device_qword(16, 5);  // the engine wrote 5 on the device side only
  s.wait(5, 100ms);
  REQUIRE(!m.pulls.empty());
  CHECK(m.pulls.front().offset == 16);
  CHECK(m.pulls.front().bytes == 8);
  CHECK(s.value() == 5);
  const std::size_t pulls_before = m.pulls.size();
  CHECK_THROWS_AS(s.wait(6, 50ms), tg::device_error);
  CHECK(m.pulls.size() > pulls_before + 1);  // it polled the device copy, not the shadow
}
