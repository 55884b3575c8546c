// fake_pm4_engine.hpp: a software CP for queue tests: drains a PM4 ring on its own thread.
//
// Written from the packet layouts of nvd.h and tinygrad's AMDComputeQueue, not from the encoders under test,
// so it checks them independently. It follows the write-pointer shadow, executes SET_SH_REG,
// DISPATCH_DIRECT (hands the kernel to a callback), RELEASE_MEM (memory writes), WAIT_REG_MEM,
// INDIRECT_BUFFER (runs the IB, then returns to the ring) and skips NOP, ACQUIRE_MEM and
// EVENT_WRITE. After each ring packet it reports its read pointer the way gfx11 does: a 32-bit
// dword offset inside the ring (or, optionally, an unwrapped count).
//
// Anything malformed (not type 3, unknown opcode, a packet running past the write pointer or the
// IB end, a write outside the arena) is recorded in errors() and stops the engine: that is how a
// torn or overwritten packet shows up. hang_after(n) stops consuming after n ring packets.
#pragma once
#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <string>
#include <thread>
#include <vector>

#include <tg/core/error.hpp>
#include <tg/core/hex.hpp>

#include "tests/runtime/queue/host_arena.hpp"

namespace tg::test {

struct fake_dispatch {
  std::array<std::uint32_t, 3> workgroups;
  std::array<std::uint32_t, 16> user_data;  // COMPUTE_USER_DATA_0..15 at dispatch time
  bool from_ib;
};

struct fake_release {
  memory::gpu_va address;
  std::uint64_t value;
  bool from_ib;
};

struct fake_pm4_options {
  bool wrapped_rptr = true;               // report rptr mod ring size (else the unwrapped count)
  std::uint64_t pause_every = 0;          // sleep pause_for after this many ring packets (0: never)
  std::chrono::microseconds pause_for{0};
  std::function<void(const fake_dispatch&)> on_dispatch;  // called on the engine's thread
  std::function<void(const fake_release&)> on_release;
};

class fake_pm4_engine {
 public:
  // Opcodes and fields from nvd.h (PACKET3_*).
  static constexpr std::uint32_t op_nop = 0x10, op_dispatch_direct = 0x15, op_wait_reg_mem = 0x3C,
                                 op_indirect_buffer = 0x3F, op_event_write = 0x46, op_release_mem = 0x49,
                                 op_acquire_mem = 0x58, op_set_sh_reg = 0x76;
  static constexpr std::uint32_t sh_user_data_0 = 0x240;  // SH offset of COMPUTE_USER_DATA_0 (0x2E40 - 0x2C00)

  using options = fake_pm4_options;

  fake_pm4_engine(host_arena& arena, queue::queue_memory ring, queue::queue_memory rptr, queue::queue_memory wptr,
                  options opt = {})
      : arena_(arena), ring_(ring), rptr_(rptr), wptr_(wptr), opt_(std::move(opt)),
        ring_dwords_(ring.size_bytes() / 4) {}
  ~fake_pm4_engine() { stop(); }

  void start() { thread_ = std::thread([this] { run(); }); }
  void stop() {
    stop_.store(true);
    if (thread_.joinable()) thread_.join();
  }
  // Consume `n` more ring packets, then stop reading the ring (the thread keeps running idle).
  void hang_after(std::uint64_t n) { hang_at_.store(packets_.load() + n); }

  // Read these after stop().
  const std::vector<std::string>& errors() const { return errors_; }
  std::uint64_t ring_packets() const { return packets_.load(); }
  std::uint64_t ib_packets() const { return ib_packets_; }
  std::uint64_t read_pointer() const { return pos_; }

 private:
  using packet = std::vector<std::uint32_t>;

  void fail(std::string what) {
    errors_.push_back(std::move(what));
    stop_.store(true);
  }

  std::uint32_t ring_dword(std::uint64_t at) const { return queue::read_dword(ring_, 4 * (at % ring_dwords_)); }

  // Packet length from its header: count + 2, except the one-dword NOP of count 0x3FFF (nvd.h's PACKET3,
  // pm4.hpp nop_single_dword).
  static std::size_t length(std::uint32_t h) {
    std::uint32_t op = (h >> 8) & 0xFF, count = (h >> 16) & 0x3FFF;
    return op == op_nop && count == 0x3FFF ? 1 : count + 2;
  }

  void run() {
    while (!stop_.load()) {
      std::uint64_t wptr = queue::load64(wptr_, 0);
      if (pos_ >= wptr || packets_.load() >= hang_at_.load()) {
        std::this_thread::yield();
        continue;
      }
      std::uint32_t h = ring_dword(pos_);
      if (h >> 30 != 3) return fail(str("ring dword ", pos_, ": ", tg::hex{h}, " is not a type-3 header"));
      std::size_t len = length(h);
      if (pos_ + len > wptr)
        return fail(str("ring dword ", pos_, ": packet of ", len, " dwords runs past the write pointer ", wptr));
      packet p(len);
      for (std::size_t i = 0; i < len; ++i) p[i] = ring_dword(pos_ + i);
      if (!execute(p, false)) return;
      pos_ += len;
      queue::store64(rptr_, 0, opt_.wrapped_rptr ? pos_ % ring_dwords_ : pos_);
      std::uint64_t n = packets_.fetch_add(1) + 1;
      if (opt_.pause_every && n % opt_.pause_every == 0) std::this_thread::sleep_for(opt_.pause_for);
    }
  }

  std::byte* mem(std::uint32_t lo, std::uint32_t hi, std::size_t bytes, const char* what) {
    memory::gpu_va va{std::uint64_t(hi) << 32 | lo};
    std::byte* p = arena_.at(va, bytes);
    if (!p) fail(str(what, " at ", va, " is outside the arena"));
    return p;
  }

  bool run_ib(const packet& p) {
    if (!(p[3] & (1u << 23))) return fail("INDIRECT_BUFFER without the valid bit"), false;
    std::size_t size = p[3] & 0xFFFFF;
    std::byte* ib = mem(p[1], p[2], 4 * size, "INDIRECT_BUFFER");
    if (!ib) return false;
    for (std::size_t at = 0; at < size;) {
      std::uint32_t h;
      std::memcpy(&h, ib + 4 * at, 4);
      if (h >> 30 != 3) return fail(str("IB dword ", at, ": ", tg::hex{h}, " is not a type-3 header")), false;
      std::size_t len = length(h);
      if (at + len > size) return fail(str("IB dword ", at, ": packet runs past the IB end ", size)), false;
      packet q(len);
      std::memcpy(q.data(), ib + 4 * at, 4 * len);
      if (!execute(q, true)) return false;
      ++ib_packets_;
      at += len;
    }
    return true;
  }

  bool execute(const packet& p, bool in_ib) {
    std::uint32_t op = (p[0] >> 8) & 0xFF;
    auto expect = [&](std::size_t len, const char* name) {
      if (p.size() != len) fail(str(name, " of ", p.size(), " dwords, expected ", len));
      return p.size() == len;
    };
    switch (op) {
      case op_nop: case op_acquire_mem: case op_event_write: return true;
      case op_set_sh_reg:
        for (std::size_t i = 2; i < p.size(); ++i)
          if (std::uint32_t reg = p[1] + std::uint32_t(i - 2); reg < sh_.size()) sh_[reg] = p[i];
        return true;
      case op_dispatch_direct: {
        if (!expect(5, "DISPATCH_DIRECT")) return false;
        fake_dispatch d{{p[1], p[2], p[3]}, {}, in_ib};
        std::memcpy(d.user_data.data(), &sh_[sh_user_data_0], sizeof d.user_data);
        if (opt_.on_dispatch) opt_.on_dispatch(d);
        return true;
      }
      case op_release_mem: {
        if (!expect(8, "RELEASE_MEM")) return false;
        std::uint32_t data_sel = p[2] >> 29;
        if (data_sel == 0) return true;
        std::byte* dst = mem(p[3], p[4], 8, "RELEASE_MEM");
        if (!dst) return false;
        // DATA_SEL 1 writes the low dword only; the upper dword of a signal is 0 (as tinygrad's signals keep it), so
        // a zero-extended 64-bit store is the same and stays atomic for the host's 64-bit reads.
        std::uint64_t value = data_sel == 1 ? p[5] : data_sel == 2 ? (std::uint64_t(p[6]) << 32 | p[5])
                                                                   : std::uint64_t(packets_.load());
        queue::store64({{dst, 8}, {}}, 0, value);
        if (opt_.on_release) opt_.on_release({memory::gpu_va{std::uint64_t(p[4]) << 32 | p[3]}, value, in_ib});
        return true;
      }
      case op_wait_reg_mem: {
        if (!expect(7, "WAIT_REG_MEM")) return false;
        std::byte* src = mem(p[2], p[3], 8, "WAIT_REG_MEM");
        if (!src || (p[1] & 7) != 5) return fail("WAIT_REG_MEM: only memory >= waits are emulated"), false;
        while (!stop_.load() && (queue::load64({{src, 8}, {}}, 0) & p[5]) < p[4]) std::this_thread::yield();
        return !stop_.load();
      }
      case op_indirect_buffer:
        if (in_ib) return fail("INDIRECT_BUFFER inside an IB (chaining is not used)"), false;
        return expect(4, "INDIRECT_BUFFER") && run_ib(p);
      default:
        return fail(str("unknown PM4 opcode ", tg::hex{op}, " (header ", tg::hex{p[0]}, ")")), false;
    }
  }

  host_arena& arena_;
  queue::queue_memory ring_, rptr_, wptr_;
  options opt_;
  std::uint64_t ring_dwords_;
  std::thread thread_;
  std::atomic<bool> stop_{false};
  std::atomic<std::uint64_t> packets_{0};
  std::atomic<std::uint64_t> hang_at_{std::numeric_limits<std::uint64_t>::max()};
  std::uint64_t ib_packets_ = 0;
  std::uint64_t pos_ = 0;
  std::array<std::uint32_t, 0x400> sh_{};  // the SH register window, by offset (index - PACKET3_SET_SH_REG_START)
  std::vector<std::string> errors_;
};

}  // namespace tg::test
