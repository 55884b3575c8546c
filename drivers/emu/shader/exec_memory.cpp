// exec_memory.cpp: SMEM, DS (LDS and the DS cross-lane ops), FLAT / GLOBAL / SCRATCH and the MUBUF cache
// invalidates (AMD RDNA3 / RDNA4 ISA reference guides, "Scalar Memory Operations", "Data Share
// Operations", "Flat, Scratch and Global Instructions"; opcode numbers: opcode_names.cpp).
//
// Global memory goes through the MMU one lane at a time, in lane order; a lane whose address does not
// translate raises the page fault with that lane's exact address. Private (scratch) memory is the
// emulator's layout: wave slot w (its index in the dispatch modulo COMPUTE_TMPRING_SIZE.WAVES) owns
// [base + w * 32 * lane_bytes, ...), lane l the lane_bytes from l * lane_bytes; lane_bytes is
// TMPRING_SIZE.WAVESIZE * 4 (256-byte units per 64 lanes, as tinygrad test/mockgpu/amd/amdgpu.py reads it).
#include <cstring>

#include <tg/core/error.hpp>

#include "drivers/emu/shader/executor.hpp"
#include "drivers/emu/shader/float_bits.hpp"

namespace tg::emu::shader {

namespace {

// Where one lane's access goes.
struct place {
  enum kind_t : std::uint8_t { global, lds, scratch } kind = global;
  std::uint64_t address = 0;  // VA, LDS byte address, or private-segment byte offset
};

class lane_memory {
 public:
  lane_memory(exec_context& c, wave& w, const instruction& in) : c_(c), w_(w), in_(in) {}

  void read(const place& p, unsigned lane, void* out, unsigned n) {
    switch (p.kind) {
      case place::global:
        c_.memory.read(gpu_va{p.address}, {static_cast<std::byte*>(out), n}, utcl2_client::cpc);
        c_.counters.global_bytes_read += n;
        c_.lines.touch(p.address, n, c_.counters);
        return;
      case place::lds: std::memcpy(out, lds(p.address, n), n); return;
      case place::scratch:
        c_.memory.read(gpu_va{private_va(p.address, lane, n)}, {static_cast<std::byte*>(out), n}, utcl2_client::cpc);
        return;
    }
  }
  void write(const place& p, unsigned lane, const void* in, unsigned n) {
    switch (p.kind) {
      case place::global:
        c_.memory.write(gpu_va{p.address}, {static_cast<const std::byte*>(in), n}, utcl2_client::cpc);
        c_.counters.global_bytes_written += n;
        c_.lines.touch(p.address, n, c_.counters);
        return;
      case place::lds: std::memcpy(lds(p.address, n), in, n); return;
      case place::scratch:
        c_.memory.write(gpu_va{private_va(p.address, lane, n)}, {static_cast<const std::byte*>(in), n}, utcl2_client::cpc);
        return;
    }
  }
  std::uint8_t* lds(std::uint64_t addr, unsigned n) {
    auto& v = c_.group.lds;
    if (addr + n > v.size())
      fail_instruction(c_, in_, str("LDS access of ", n, " bytes at ", hex{addr}, " beyond the workgroup's ", v.size(),
                                 " bytes (GROUP_SEGMENT_FIXED_SIZE / COMPUTE_PGM_RSRC2.LDS_SIZE)"));
    return v.data() + addr;
  }

 private:
  std::uint64_t private_va(std::uint64_t offset, unsigned lane, unsigned n) {
    // The wave's slot of the scratch the driver programmed: COMPUTE_DISPATCH_SCRATCH_BASE plus the
    // wave's offset, WAVESIZE x 256 bytes per 64 lanes (interpreter.cpp, init_wave). Beyond it a card
    // reads or clobbers another wave's private memory; here it is a scratch fault of the dispatch.
    if (w_.scratch_lane_bytes == 0)
      fail_instruction(c_, in_, str("scratch fault: a private-segment access of ", n, " bytes at ", hex{offset},
                                 ", but COMPUTE_TMPRING_SIZE.WAVESIZE is 0 (no scratch programmed)"));
    if (offset + n > w_.scratch_lane_bytes)
      fail_instruction(c_, in_, str("scratch fault: a private-segment access of ", n, " bytes at ", hex{offset},
                                 " outside the ", w_.scratch_lane_bytes,
                                 " bytes per lane COMPUTE_TMPRING_SIZE.WAVESIZE programs (lane ", lane, ", scratch base ",
                                 gpu_va{w_.scratch_base}, ")"));
    return w_.scratch_base + std::uint64_t(lane) * w_.scratch_lane_bytes + offset;
  }

  exec_context& c_;
  wave& w_;
  const instruction& in_;
};

// An atomic read-modify-write on 32 bits; returns false for an opcode that is not one.
bool atomic32(unsigned op, std::uint32_t old, std::uint32_t data, std::uint32_t data2, std::uint32_t& out) {
  switch (op) {
    case 0: out = old + data; return true;
    case 1: out = old - data; return true;
    case 2: out = data - old; return true;
    case 3: out = old >= data ? 0 : old + 1; return true;
    case 4: out = (old == 0 || old > data) ? data : old - 1; return true;
    case 5: out = std::uint32_t(std::min(std::int32_t(old), std::int32_t(data))); return true;
    case 6: out = std::uint32_t(std::max(std::int32_t(old), std::int32_t(data))); return true;
    case 7: out = std::min(old, data); return true;
    case 8: out = std::max(old, data); return true;
    case 9: out = old & data; return true;
    case 10: out = old | data; return true;
    case 11: out = old ^ data; return true;
    case 12: out = (old & ~data) | data2; return true;  // mskor
    case 13: out = data; return true;                    // swap / storexchg
    case 14: out = old == data2 ? data : old; return true;  // cmpswap: data = new, data2 = compare
    case 15: out = bits_of(as_f32(old) + as_f32(data)); return true;
    case 16: out = bits_of(std::fmin(as_f32(old), as_f32(data))); return true;
    case 17: out = bits_of(std::fmax(as_f32(old), as_f32(data))); return true;
    default: return false;
  }
}

// DS opcode -> (atomic32 code, returns old value)
bool ds_atomic(unsigned op, unsigned& code, bool& rtn) {
  rtn = op >= 32;
  const unsigned base = rtn ? op - 32 : op;
  if (op == 121) { code = 15; rtn = true; return true; }
  if (base <= 12) { code = base; return true; }
  if (op == 45) { code = 13; return true; }
  if (op == 16 || op == 48) { code = 14; return true; }
  if (op == 18) { code = 16; rtn = false; return true; }
  if (op == 19) { code = 17; rtn = false; return true; }
  if (op == 21) { code = 15; rtn = false; return true; }
  return false;
}

// FLAT/GLOBAL opcode -> atomic32 code
bool vmem_atomic(unsigned op, unsigned& code) {
  switch (op) {
    case 51: code = 13; return true;
    case 52: code = 14; return true;
    case 53: code = 0; return true;
    case 54: code = 1; return true;
    case 56: code = 5; return true;
    case 57: code = 7; return true;
    case 58: code = 6; return true;
    case 59: code = 8; return true;
    case 60: code = 9; return true;
    case 61: code = 10; return true;
    case 62: code = 11; return true;
    case 63: code = 3; return true;
    case 64: code = 4; return true;
    case 86: code = 15; return true;
    default: return false;
  }
}

}  // namespace

void exec_smem(exec_context& c, wave& w, const instruction& in) {
  const bool g11 = c.l.gen == isa_gen::gfx11;
  unsigned dwords = 0;
  if (in.op <= 4) dwords = 1u << in.op;
  else if (!g11 && in.op == 5) dwords = 3;
  else if ((g11 && (in.op == 32 || in.op == 33)) || (!g11 && in.op == 33)) return;  // s_gl1_inv, s_dcache_inv
  else fail_instruction(c, in, "SMEM opcode not implemented (s_buffer_load and s_prefetch are not)");
  std::uint64_t base = std::uint64_t{w.sgpr[(in.sbase + 1) & 127]} << 32 | w.sgpr[in.sbase];
  base += std::int64_t(in.offset);
  if (in.soffset != src::null) base += w.sgpr[in.soffset & 127];
  base &= ~std::uint64_t{3};  // scalar loads are dword aligned
  std::array<std::uint32_t, 16> data{};
  c.memory.read(gpu_va{base}, std::as_writable_bytes(std::span(data.data(), dwords)), utcl2_client::cpc);
  c.counters.global_bytes_read += 4 * dwords;
  c.lines.touch(base, 4 * dwords, c.counters);
  for (unsigned i = 0; i < dwords; ++i) w.write_sgpr(in.sdst + i, data[i]);
}

void exec_ds(exec_context& c, wave& w, const instruction& in) {
  lane_memory m(c, w, in);
  const std::uint32_t mask = w.exec();
  const unsigned off = unsigned(in.offset1) << 8 | in.offset0;
  auto at = [&](unsigned l, unsigned extra) { return place{place::lds, std::uint64_t(w.v(in.addr, l)) + extra}; };
  auto lanes = [&](auto fn) {
    for (unsigned l = 0; l < wave_lanes; ++l)
      if ((mask >> l) & 1) fn(l);
  };
  auto store_n = [&](unsigned bytes) {
    lanes([&](unsigned l) {
      std::uint32_t v[4];
      for (unsigned i = 0; i < 4; ++i) v[i] = w.v(in.data0 + i, l);
      m.write(at(l, off), l, v, bytes);
    });
  };
  auto load_n = [&](unsigned bytes) {
    std::vector<std::uint32_t> tmp(wave_lanes * 4);
    lanes([&](unsigned l) { m.read(at(l, off), l, &tmp[l * 4], bytes); });
    lanes([&](unsigned l) { for (unsigned i = 0; i < bytes / 4; ++i) w.v(in.vdst + i, l) = tmp[l * 4 + i]; });
  };
  auto store_2addr = [&](unsigned size, unsigned stride) {
    lanes([&](unsigned l) {
      std::uint32_t a[2] = {w.v(in.data0, l), w.v(in.data0 + 1, l)}, b[2] = {w.v(in.data1, l), w.v(in.data1 + 1, l)};
      m.write(at(l, in.offset0 * stride), l, a, size);
      m.write(at(l, in.offset1 * stride), l, b, size);
    });
  };
  auto load_2addr = [&](unsigned size, unsigned stride) {
    std::vector<std::uint32_t> tmp(wave_lanes * 4);
    lanes([&](unsigned l) {
      m.read(at(l, in.offset0 * stride), l, &tmp[l * 4], size);
      m.read(at(l, in.offset1 * stride), l, &tmp[l * 4 + size / 4], size);
    });
    lanes([&](unsigned l) { for (unsigned i = 0; i < 2 * size / 4; ++i) w.v(in.vdst + i, l) = tmp[l * 4 + i]; });
  };
  auto load_small = [&](unsigned bytes, bool sign, int half) {  // half: -1 whole dword, 0 low, 1 high (d16)
    std::array<std::uint32_t, wave_lanes> tmp{};
    lanes([&](unsigned l) {
      std::uint32_t v = 0;
      m.read(at(l, off), l, &v, bytes);
      if (sign) v = bytes == 1 ? std::uint32_t(std::int32_t(std::int8_t(v))) : std::uint32_t(std::int32_t(std::int16_t(v)));
      tmp[l] = v;
    });
    lanes([&](unsigned l) {
      std::uint32_t& d = w.v(in.vdst, l);
      d = half < 0 ? tmp[l] : half == 0 ? (d & 0xFFFF0000u) | (tmp[l] & 0xFFFF) : (d & 0xFFFF) | tmp[l] << 16;
    });
  };
  if (in.gds) fail_instruction(c, in, "GDS is not modelled");
  switch (in.op) {
    case 13: store_n(4); return;
    case 30: store_n(1); return;
    case 31: store_n(2); return;
    case 77: store_n(8); return;
    case 222: store_n(12); return;
    case 223: store_n(16); return;
    case 160: case 161:
      lanes([&](unsigned l) { const std::uint32_t v = w.v(in.data0, l) >> 16; m.write(at(l, off), l, &v, in.op == 160 ? 1 : 2); });
      return;
    case 14: store_2addr(4, 4); return;
    case 15: store_2addr(4, 256); return;
    case 78: store_2addr(8, 8); return;
    case 79: store_2addr(8, 512); return;
    case 54: load_n(4); return;
    case 118: load_n(8); return;
    case 254: load_n(12); return;
    case 255: load_n(16); return;
    case 57: load_small(1, true, -1); return;
    case 58: load_small(1, false, -1); return;
    case 59: load_small(2, true, -1); return;
    case 60: load_small(2, false, -1); return;
    case 162: load_small(1, false, 0); return;
    case 163: load_small(1, false, 1); return;
    case 164: load_small(1, true, 0); return;
    case 165: load_small(1, true, 1); return;
    case 166: load_small(2, false, 0); return;
    case 167: load_small(2, false, 1); return;
    case 55: load_2addr(4, 4); return;
    case 56: load_2addr(4, 256); return;
    case 119: load_2addr(8, 8); return;
    case 120: load_2addr(8, 512); return;
    case 53: {  // ds_swizzle_b32: offset bit 15 quad-perm mode, else and/or/xor masks over 32 lanes
      std::array<std::uint32_t, wave_lanes> tmp{};
      lanes([&](unsigned l) {
        unsigned from;
        if (off & 0x8000) from = (l & ~3u) | ((off >> (2 * (l & 3))) & 3);
        else if (off >= 0xE000) fail_instruction(c, in, "ds_swizzle_b32 FFT mode");
        else from = ((l & (off & 0x1F)) | ((off >> 5) & 0x1F)) ^ ((off >> 10) & 0x1F);
        tmp[l] = w.active(from) ? w.v(in.addr, from) : 0;  // the data is in the ADDR field
      });
      lanes([&](unsigned l) { w.v(in.vdst, l) = tmp[l]; });
      return;
    }
    case 178: case 179: {  // ds_permute_b32 (push to lane addr/4) and ds_bpermute_b32 (pull from it)
      std::array<std::uint32_t, wave_lanes> tmp{};
      if (in.op == 179) {
        lanes([&](unsigned l) {
          const unsigned from = ((w.v(in.addr, l) + off) / 4) & 31;
          tmp[l] = w.active(from) ? w.v(in.data0, from) : 0;
        });
      } else {
        lanes([&](unsigned l) { tmp[((w.v(in.addr, l) + off) / 4) & 31] = w.v(in.data0, l); });
      }
      lanes([&](unsigned l) { w.v(in.vdst, l) = tmp[l]; });
      return;
    }
    default: break;
  }
  unsigned code = 0;
  bool rtn = false;
  if (in.op <= 121 && ds_atomic(in.op, code, rtn)) {
    // Lanes in order, each a read-modify-write of LDS: lanes hitting one address see each other.
    std::array<std::uint32_t, wave_lanes> old{};
    lanes([&](unsigned l) {
      std::uint8_t* p = m.lds(std::uint64_t(w.v(in.addr, l)) + off, 4);
      const std::uint32_t o = [&] { std::uint32_t v; std::memcpy(&v, p, 4); return v; }();
      std::uint32_t n = 0;
      // ds_cmpstore_b32 addr, data0 (new value), data1 (compare), as global_atomic_cmpswap's {new, compare}.
      atomic32(code, o, w.v(in.data0, l), w.v(in.data1, l), n);
      std::memcpy(p, &n, 4);
      old[l] = o;
    });
    if (rtn) lanes([&](unsigned l) { w.v(in.vdst, l) = old[l]; });
    return;
  }
  fail_instruction(c, in, "DS opcode not implemented");
}

void exec_vmem(exec_context& c, wave& w, const instruction& in) {
  if (in.fam == family::mubuf) {
    if (in.op == 43 || in.op == 44) return;  // buffer_gl0_inv / buffer_gl1_inv: no caches here
    fail_instruction(c, in, "MUBUF opcode not implemented (buffer loads and stores are not)");
  }
  const unsigned op = in.op;
  if (c.l.gen == isa_gen::gfx12 && in.fam == family::global && (op == 43 || op == 44)) return;  // global_inv, global_wb
  lane_memory m(c, w, in);
  const std::uint32_t mask = w.exec();
  auto where = [&](unsigned l) -> place {
    if (in.fam == family::scratch) {
      std::uint64_t a = std::uint64_t(std::int64_t(in.offset));
      if (in.sve) a += w.v(in.addr, l);
      if (in.saddr != src::null) a += w.sgpr[in.saddr & 127];
      return {place::scratch, a & 0xFFFFFFFFu};
    }
    std::uint64_t a;
    if (in.fam == family::global && in.saddr != src::null)
      a = (std::uint64_t{w.sgpr[(in.saddr + 1) & 127]} << 32 | w.sgpr[in.saddr & 127]) + w.v(in.addr, l);
    else
      a = std::uint64_t{w.v(in.addr + 1, l)} << 32 | w.v(in.addr, l);
    a += std::uint64_t(std::int64_t(in.offset));
    if (in.fam == family::flat) {  // apertures (wave.hpp): LDS and private memory through generic addresses
      if (a - shared_aperture < aperture_bytes) return {place::lds, a - shared_aperture};
      if (a - private_aperture < aperture_bytes) return {place::scratch, a - private_aperture};
    }
    return {place::global, a};
  };
  auto lanes = [&](auto fn) {
    for (unsigned l = 0; l < wave_lanes; ++l)
      if ((mask >> l) & 1) fn(l);
  };
  auto load = [&](unsigned bytes, bool sign, int half) {
    w.note_load();
    std::vector<std::uint32_t> tmp(wave_lanes * 4);
    lanes([&](unsigned l) {
      m.read(where(l), l, &tmp[l * 4], bytes);
      std::uint32_t& v = tmp[l * 4];
      if (sign && bytes == 1) v = std::uint32_t(std::int32_t(std::int8_t(v)));
      if (sign && bytes == 2) v = std::uint32_t(std::int32_t(std::int16_t(v)));
    });
    lanes([&](unsigned l) {
      if (half < 0) {
        for (unsigned i = 0; i < (bytes + 3) / 4; ++i) w.v(in.vdst + i, l) = tmp[l * 4 + i];
      } else {
        std::uint32_t& d = w.v(in.vdst, l);
        d = half == 0 ? (d & 0xFFFF0000u) | (tmp[l * 4] & 0xFFFF) : (d & 0xFFFF) | tmp[l * 4] << 16;
      }
    });
  };
  auto store = [&](unsigned bytes, bool high) {
    lanes([&](unsigned l) {
      std::uint32_t v[4];
      for (unsigned i = 0; i < 4; ++i) v[i] = w.v(in.data0 + i, l);
      if (high) v[0] >>= 16;
      m.write(where(l), l, v, bytes);
    });
  };
  switch (op) {
    case 16: load(1, false, -1); return;
    case 17: load(1, true, -1); return;
    case 18: load(2, false, -1); return;
    case 19: load(2, true, -1); return;
    case 20: load(4, false, -1); return;
    case 21: load(8, false, -1); return;
    case 22: load(12, false, -1); return;
    case 23: load(16, false, -1); return;
    case 24: store(1, false); return;
    case 25: store(2, false); return;
    case 26: store(4, false); return;
    case 27: store(8, false); return;
    case 28: store(12, false); return;
    case 29: store(16, false); return;
    case 30: load(1, false, 0); return;
    case 31: load(1, true, 0); return;
    case 32: load(2, false, 0); return;
    case 33: load(1, false, 1); return;
    case 34: load(1, true, 1); return;
    case 35: load(2, false, 1); return;
    case 36: store(1, true); return;
    case 37: store(2, true); return;
    default: break;
  }
  unsigned code = 0;
  if (in.fam != family::scratch && vmem_atomic(op, code)) {
    const auto whole = c.memory.atomic_section();  // other threads' workgroups see each lane's update whole
    std::array<std::uint32_t, wave_lanes> old{};
    lanes([&](unsigned l) {
      const place p = where(l);
      std::uint32_t o = 0, n = 0;
      m.read(p, l, &o, 4);
      atomic32(code, o, w.v(in.data0, l), w.v(in.data0 + 1, l), n);  // cmpswap: data = {new, compare}
      m.write(p, l, &n, 4);
      old[l] = o;
    });
    if (in.glc) lanes([&](unsigned l) { w.v(in.vdst, l) = old[l]; });
    return;
  }
  fail_instruction(c, in, "FLAT/GLOBAL/SCRATCH opcode not implemented");
}

}  // namespace tg::emu::shader
