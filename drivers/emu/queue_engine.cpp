// queue_engine.cpp: ring and IB reading, doorbells, write-back and halting (see queue_engine.hpp).
#include "drivers/emu/queue_engine.hpp"

#include "drivers/emu/doorbell_routes.hpp"

#include <algorithm>

namespace tg::emu {

queue_engine::queue_engine(gpu_core& core, engine_id engine, std::uint32_t queue, utcl2_client client,
                           unsigned unit_bytes, unsigned max_ib_depth, const ring_config& ring)
    : core_(core), engine_(engine), queue_(queue), client_(client), unit_(unit_bytes), max_ib_depth_(max_ib_depth),
      ring_(ring), rptr_(ring.rptr * unit_bytes), wptr_(ring.wptr * unit_bytes),
      // A doorbell already in the slot belongs to an earlier queue; only later stores count.
      doorbell_value_(core.doorbells.load64(ring.doorbell_offset)),
      doorbell_sequence_(core.doorbells.sequence(ring.doorbell_offset)) {}

namespace {

// The pointer words (write-back, shadow) are 64-bit and only 4-byte aligned by their register
// fields (RPTR_REPORT_ADDR 31:2); an unaligned one is accessed as two dwords.
std::uint64_t load_pointer(mmu& m, gpu_va at, utcl2_client c) {
  if (at.value % 8 == 0) return m.load64(at, c);
  return m.load32(at, c) | std::uint64_t{m.load32(at + 4, c)} << 32;
}

void store_pointer(mmu& m, gpu_va at, std::uint64_t value, utcl2_client c) {
  if (at.value % 8 == 0) return m.store64(at, value, c);
  m.store32(at, std::uint32_t(value), c);
  m.store32(at + 4, std::uint32_t(value >> 32), c);
}

}  // namespace

// ---- where the stream is

gpu_va queue_engine::position_va() const {
  if (!ibs_.empty()) return ibs_.back().base + ibs_.back().pos;
  return ring_.base + rptr_ % ring_.size_bytes;
}

std::uint64_t queue_engine::position_offset() const {
  return ibs_.empty() ? rptr_ % ring_.size_bytes : ibs_.back().pos;
}

std::uint64_t queue_engine::available_bytes() const {
  if (!ibs_.empty()) return ibs_.back().size_bytes - ibs_.back().pos;
  return wptr_ - rptr_;
}

void queue_engine::read_stream(std::uint64_t offset_bytes, std::span<std::uint32_t> out) {
  auto bytes = std::as_writable_bytes(out);
  if (!ibs_.empty()) {
    core_.gmmu.read(ibs_.back().base + ibs_.back().pos + offset_bytes, bytes, client_);
    return;
  }
  // The ring wraps: read up to its end, then from its start.
  std::uint64_t slot = (rptr_ + offset_bytes) % ring_.size_bytes;
  for (std::size_t done = 0; done < bytes.size();) {
    const std::uint64_t n = std::min<std::uint64_t>(bytes.size() - done, ring_.size_bytes - slot);
    core_.gmmu.read(ring_.base + slot, bytes.subspan(done, n), client_);
    done += n;
    slot = 0;
  }
}

void queue_engine::advance(std::uint64_t bytes) {
  if (ibs_.empty()) {
    rptr_ += bytes;
    return;
  }
  ibs_.back().pos += bytes;
  while (!ibs_.empty() && ibs_.back().pos >= ibs_.back().size_bytes) ibs_.pop_back();
}

// ---- packets

bool queue_engine::packet::need(std::size_t n) {
  if (words_.size() >= n) return true;
  if (engine_.ibs_.empty() && 4 * n > engine_.ring_.size_bytes)
    bad_packet(str("a ", 4 * n, "-byte packet cannot fit the ", engine_.ring_.size_bytes, "-byte ring"));
  if (4 * n > engine_.available_bytes()) return false;
  const std::size_t have = words_.size();
  words_.resize(n);
  engine_.read_stream(4 * have, std::span(words_).subspan(have));
  if (have == 0) engine_.header_ = words_[0];
  return true;
}

std::uint64_t queue_engine::packet::bytes_to_end() const {
  if (!engine_.ibs_.empty()) return engine_.available_bytes();
  return engine_.ring_.size_bytes - engine_.rptr_ % engine_.ring_.size_bytes;
}

// ---- doorbells and pointers

bool queue_engine::poll_doorbell() {
  const std::uint64_t value = core_.doorbells.load64(ring_.doorbell_offset);
  const std::uint64_t sequence = core_.doorbells.sequence(ring_.doorbell_offset);
  if (value == doorbell_value_ && sequence == doorbell_sequence_) return false;
  doorbell_value_ = value;
  doorbell_sequence_ = sequence;
  if (!doorbell_reaches(core_, engine_, ring_.doorbell_offset)) {  // no S2A route: the store never arrives
    ++core_.stats.dropped_doorbells;
    return false;
  }
  if (halted_) return true;

  if (value > (std::uint64_t{1} << 62) / unit_) {  // far beyond any real put value; would overflow
    halt(fault_kind::protocol, {}, false, str("the doorbell published the write pointer ", hex{value}));
    return true;
  }
  const std::uint64_t wptr = value * unit_;
  if (wptr < wptr_) {
    record(fault_kind::protocol, {}, false,
           str("the doorbell moved the write pointer back from ", wptr_ / unit_, " to ", value,
               " (put values grow forever, tinygrad/runtime/support/am/ip.py; gfx_v11_0.c); ignored"));
    return true;
  }
  if (wptr - rptr_ > ring_.size_bytes) {
    halt(fault_kind::protocol, {}, false,
         str("ring overrun: the doorbell published ", (wptr - rptr_) / unit_, " units past the read pointer ",
             rptr_ / unit_, " but the ring holds ", ring_.size_bytes / unit_,
             "; packets that never ran were overwritten (tinygrad/runtime/support/am/ip.py; gfx_v11_0.c)"));
    return true;
  }
  if (ring_.wptr_shadow) {
    try {
      const std::uint64_t shadow = load_pointer(core_.gmmu, *ring_.wptr_shadow, client_);
      if (shadow < value)
        record(fault_kind::protocol, *ring_.wptr_shadow, false,
               str("the write-pointer shadow at ", *ring_.wptr_shadow, " reads ", shadow, ", behind the doorbell's ",
                   value, ": store the shadow before the doorbell (tinygrad/runtime/support/am/ip.py; gfx_v11_0.c)"));
    } catch (const page_fault& e) {
      record(fault_kind::page_fault, e.address, false, str("reading the write-pointer shadow: ", e.what()));
    } catch (const std::exception& e) {
      record(fault_kind::bad_queue_setup, *ring_.wptr_shadow, false, str("reading the write-pointer shadow: ", e.what()));
    }
  }
  wptr_ = wptr;
  publish_pointers(rptr_ / unit_, wptr_ / unit_);
  return true;
}

void queue_engine::write_back() {
  publish_pointers(rptr_ / unit_, wptr_ / unit_);
  if (!ring_.rptr_writeback) return;
  try {
    store_pointer(core_.gmmu, *ring_.rptr_writeback, rptr_ / unit_, client_);
  } catch (const page_fault& e) {
    halt(fault_kind::page_fault, e.address, true, str("writing back the read pointer: ", e.what()));
  } catch (const std::exception& e) {
    halt(fault_kind::bad_queue_setup, *ring_.rptr_writeback, true, str("writing back the read pointer: ", e.what()));
  }
}

// ---- running

queue_engine::run_result queue_engine::run(std::size_t max_packets) {
  run_result r;
  if (halted_) return r;
  const std::uint64_t rptr_before = rptr_;
  while (r.packets < max_packets && (!ibs_.empty() || rptr_ < wptr_)) {
    packet p(*this);
    header_ = 0;
    outcome o;
    try {
      o = execute(p);
    } catch (const page_fault& e) {
      halt(fault_kind::page_fault, e.address, e.access == access_kind::write, e.what());
      break;
    } catch (const queue_fault& e) {
      halt(e.kind, e.address, false, e.what());
      break;
    } catch (const std::exception& e) {
      halt(fault_kind::bad_packet, {}, false, e.what());
      break;
    }
    if (o.kind == outcome::not_ready) {
      if (!ibs_.empty()) halt(fault_kind::bad_packet, {}, false, "the packet runs past the end of its IB");
      break;
    }
    if (o.kind == outcome::wait) {
      waiting_ = r.waiting = true;
      break;
    }
    waiting_ = false;
    header_ = 0;
    advance(o.bytes);
    ++packets_;
    ++r.packets;
    ++(engine_ == engine_id::compute ? core_.stats.pm4_packets : core_.stats.sdma_packets);
    if (o.kind == outcome::enter_ib) {
      if (ibs_.size() >= max_ib_depth_) {
        halt(fault_kind::bad_packet, {}, false, str("IBs nested deeper than ", max_ib_depth_));
        break;
      }
      if (o.ib_bytes > 0) ibs_.push_back({o.ib, o.ib_bytes, 0});
    }
  }
  if (rptr_ != rptr_before || r.packets > 0) write_back();
  return r;
}

void queue_engine::record(fault_kind kind, gpu_va address, bool write, const std::string& message) {
  core_.faults.push_back({kind, engine_, queue_, position_va(), position_offset(), !ibs_.empty(), header_, address,
                          write, message});
}

void queue_engine::halt(fault_kind kind, gpu_va address, bool write, const std::string& message) {
  record(kind, address, write, message);
  halted_ = true;
  waiting_ = false;
}

queue_status queue_engine::status() const {
  return {halted_, waiting_, rptr_ / unit_, wptr_ / unit_, packets_, unsigned(ibs_.size())};
}

}  // namespace tg::emu
