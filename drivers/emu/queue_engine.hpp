// queue_engine.hpp: what the compute (PM4) and SDMA engines share: the ring between the read
// pointer and the write pointer the doorbell published, indirect buffers, pointer write-back,
// and halting at a fault.
//
// Pointers follow tinygrad/runtime/support/am/ip.py; gfx_v11_0.c: they grow forever (never wrapped), the ring slot is the pointer
// modulo the ring size, PM4 counts dwords and SDMA bytes (the engine is told its unit). A
// doorbell is a 64-bit store of the new write pointer; a doorbell that moves the pointer back,
// or publishes more than the ring holds, is a protocol fault (tinygrad/runtime/support/am/ip.py; gfx_v11_0.c: a ring overrun
// overwrote packets that never ran). A doorbell no S2A entry routes to the engine is dropped
// (doorbell_routes.hpp). After each run the engine writes its read pointer, 64 bits
// in its unit, to the write-back address the driver programmed.
//
// A packet that is not wholly published yet waits for the next doorbell; one that is blocked on
// memory (WAIT_REG_MEM, POLL_REGMEM) leaves the read pointer on itself and is retried on every
// run. A fault records a fault_record and halts the queue until it is set up again.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "drivers/emu/gpu_core.hpp"

namespace tg::emu {

struct queue_status {
  bool halted = false;    // stopped at a fault until set up again
  bool waiting = false;   // blocked on a WAIT_REG_MEM / POLL_REGMEM
  std::uint64_t rptr = 0, wptr = 0;  // in the queue's unit: PM4 dwords, SDMA bytes
  std::uint64_t packets = 0;         // executed, IB contents included
  unsigned ib_depth = 0;
};

// A fault an engine raises while executing a packet (page faults come as mmu's page_fault).
struct queue_fault : std::runtime_error {
  queue_fault(fault_kind k, const std::string& message, gpu_va at = {}) : std::runtime_error(message), kind(k), address(at) {}
  fault_kind kind;
  gpu_va address;
};

class queue_engine {
 public:
  struct ring_config {
    gpu_va base;
    std::uint64_t size_bytes = 0;
    std::uint64_t rptr = 0, wptr = 0;          // in the queue's unit
    std::optional<gpu_va> rptr_writeback;      // the engine reports its read pointer here
    std::optional<gpu_va> wptr_shadow;         // the host's copy of the write pointer (checked)
    std::uint64_t doorbell_offset = 0;         // byte offset in the doorbell page
  };

  queue_engine(gpu_core& core, engine_id engine, std::uint32_t queue, utcl2_client client, unsigned unit_bytes,
               unsigned max_ib_depth, const ring_config& ring);
  virtual ~queue_engine() = default;
  queue_engine(const queue_engine&) = delete;
  queue_engine& operator=(const queue_engine&) = delete;

  // Takes a new write pointer from the doorbell slot; true when there was one.
  bool poll_doorbell();

  struct run_result {
    std::size_t packets = 0;
    bool waiting = false;
  };
  // Executes up to max_packets packets; stops early when idle, waiting or halted.
  run_result run(std::size_t max_packets);

  queue_status status() const;
  std::uint64_t doorbell_offset() const { return ring_.doorbell_offset; }

 protected:
  // What execute() did with the packet at the current position.
  struct outcome {
    enum kind_t { done, enter_ib, wait, not_ready } kind = done;
    std::uint64_t bytes = 0;  // done / enter_ib: the packet's length
    gpu_va ib;                // enter_ib: the buffer to run next, then come back
    std::uint64_t ib_bytes = 0;
  };
  // The dwords of the packet at the current position, fetched on demand.
  class packet {
   public:
    explicit packet(queue_engine& e) : engine_(e) {}
    // False when fewer than n dwords are published (ring) or left (IB) from here.
    bool need(std::size_t n);
    std::uint32_t operator[](std::size_t i) const { return words_[i]; }
    std::size_t size() const { return words_.size(); }
    // Bytes from here to the end of the ring (or the IB) without wrapping.
    std::uint64_t bytes_to_end() const;
    bool in_ib() const { return !engine_.ibs_.empty(); }
    bool retrying() const { return engine_.waiting_; }  // the previous run left it waiting

   private:
    queue_engine& engine_;
    std::vector<std::uint32_t> words_;
  };

  virtual outcome execute(packet& p) = 0;
  // Mirrors the pointers into the queue's registers (RB_RPTR, CP_HQD_PQ_RPTR, ...).
  virtual void publish_pointers(std::uint64_t rptr, std::uint64_t wptr) = 0;

  [[noreturn]] static void bad_packet(const std::string& message) { throw queue_fault(fault_kind::bad_packet, message); }
  void record(fault_kind kind, gpu_va address, bool write, const std::string& message);

  gpu_core& core_;
  const engine_id engine_;
  const std::uint32_t queue_;
  const utcl2_client client_;

 private:
  struct ib_frame {
    gpu_va base;
    std::uint64_t size_bytes, pos;
  };
  gpu_va position_va() const;
  std::uint64_t position_offset() const;
  std::uint64_t available_bytes() const;
  void read_stream(std::uint64_t offset_bytes, std::span<std::uint32_t> out);
  void advance(std::uint64_t bytes);
  void halt(fault_kind kind, gpu_va address, bool write, const std::string& message);
  void write_back();

  const unsigned unit_;
  const unsigned max_ib_depth_;
  ring_config ring_;
  std::uint64_t rptr_, wptr_;  // bytes
  std::vector<ib_frame> ibs_;
  std::uint64_t doorbell_value_, doorbell_sequence_;
  bool halted_ = false, waiting_ = false;
  std::uint64_t packets_ = 0;
  std::uint32_t header_ = 0;  // of the packet being executed, for fault records
};

}  // namespace tg::emu
