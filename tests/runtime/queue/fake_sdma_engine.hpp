// fake_sdma_engine.hpp: a software SDMA engine for queue tests: drains an SDMA ring on its thread.
//
// Written from sdma_v6_0_0_pkt_open.h and tinygrad's AMDCopyQueue (packet lengths), independently of the
// encoders and of sdma_packet_size. Pointers are bytes and the read pointer is reported unwrapped
// (64-bit write-back, as AM_SDMA.setup_ring programs it). Like the hardware the reference was written for, it
// refuses a packet that straddles the ring end (see AMDCopyQueue._submit): that, an unknown op, or a packet past
// the write pointer is recorded in errors() and stops the engine. Zero dwords are NOPs.
#pragma once
#include <atomic>
#include <cstdint>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include <tg/core/error.hpp>
#include <tg/core/hex.hpp>

#include "tests/runtime/queue/host_arena.hpp"

namespace tg::test {

class fake_sdma_engine {
 public:
  fake_sdma_engine(host_arena& arena, queue::queue_memory ring, queue::queue_memory rptr, queue::queue_memory wptr)
      : arena_(arena), ring_(ring), rptr_(rptr), wptr_(wptr), ring_bytes_(ring.size_bytes()) {}
  ~fake_sdma_engine() { stop(); }

  void start() { thread_ = std::thread([this] { run(); }); }
  void stop() {
    stop_.store(true);
    if (thread_.joinable()) thread_.join();
  }

  // Read these after stop().
  const std::vector<std::string>& errors() const { return errors_; }
  std::uint64_t packets() const { return packets_; }
  std::uint64_t nop_dwords() const { return nop_dwords_; }

 private:
  void fail(std::string what) {
    errors_.push_back(std::move(what));
    stop_.store(true);
  }

  std::uint32_t dword(std::uint64_t byte_pos) const { return queue::read_dword(ring_, byte_pos % ring_bytes_); }

  // Dwords in the packet at byte_pos; 0 for an unknown op (sdma_v6_0_0_pkt_open.h). Reads
  // nothing at or past wptr: that memory may be being written.
  std::size_t length(std::uint64_t byte_pos, std::uint64_t wptr) const {
    std::uint32_t h = dword(byte_pos);
    switch (h & 0xFF) {
      case 0: return 1 + ((h >> 16) & 0x3FFF);  // NOP, with its optional count
      case 1: return 7;                         // COPY_LINEAR
      case 2:  // WRITE: 4 + (count + 1); a cut-off header counts as 4, which fails the wptr check
        return byte_pos + 16 > wptr ? 4 : 5 + (dword(byte_pos + 12) & 0xFFFFF);
      case 5: return 4;                         // FENCE
      case 6: return 2;                         // TRAP
      case 8: return 6;                         // POLL_REGMEM
      case 11: return 5;                        // CONST_FILL
      case 13: return 3;                        // TIMESTAMP
      default: return 0;
    }
  }

  std::byte* mem(std::uint32_t lo, std::uint32_t hi, std::size_t bytes, const char* what) {
    memory::gpu_va va{std::uint64_t(hi) << 32 | lo};
    std::byte* p = arena_.at(va, bytes);
    if (!p) fail(str(what, " at ", va, " is outside the arena"));
    return p;
  }

  void run() {
    while (!stop_.load()) {
      std::uint64_t wptr = queue::load64(wptr_, 0);
      if (pos_ >= wptr) {
        std::this_thread::yield();
        continue;
      }
      std::size_t len = length(pos_, wptr);
      if (len == 0) return fail(str("ring byte ", pos_, ": unknown SDMA header ", tg::hex{dword(pos_)}));
      if (pos_ % ring_bytes_ + 4 * len > ring_bytes_)
        return fail(str("ring byte ", pos_, ": packet of ", len, " dwords straddles the ring end"));
      if (pos_ + 4 * len > wptr)
        return fail(str("ring byte ", pos_, ": packet of ", len, " dwords runs past the write pointer ", wptr));
      std::vector<std::uint32_t> p(len);
      for (std::size_t i = 0; i < len; ++i) p[i] = dword(pos_ + 4 * i);
      if (!execute(p)) return;
      pos_ += 4 * len;
      queue::store64(rptr_, 0, pos_);
    }
  }

  bool execute(const std::vector<std::uint32_t>& p) {
    switch (p[0] & 0xFF) {
      case 0: nop_dwords_ += p.size(); return true;
      case 5: {  // FENCE: 32-bit data, zero-extended like the reference's mock (SDMAExecutor._execute_fence)
        std::byte* dst = mem(p[1], p[2], 8, "FENCE");
        if (dst) queue::store64({{dst, 8}, {}}, 0, p[3]);
        ++packets_;
        return dst != nullptr;
      }
      case 1: {  // COPY_LINEAR: count + 1 bytes
        std::size_t bytes = (p[1] & 0x3FFFFFFF) + 1;
        std::byte* src = mem(p[3], p[4], bytes, "COPY_LINEAR source");
        std::byte* dst = src ? mem(p[5], p[6], bytes, "COPY_LINEAR destination") : nullptr;
        if (dst) std::memmove(dst, src, bytes);
        ++packets_;
        return dst != nullptr;
      }
      default: ++packets_; return true;  // TRAP, WRITE, POLL_REGMEM, CONST_FILL, TIMESTAMP: not needed
    }
  }

  host_arena& arena_;
  queue::queue_memory ring_, rptr_, wptr_;
  std::uint64_t ring_bytes_;
  std::thread thread_;
  std::atomic<bool> stop_{false};
  std::uint64_t pos_ = 0, packets_ = 0, nop_dwords_ = 0;
  std::vector<std::string> errors_;
};

}  // namespace tg::test
