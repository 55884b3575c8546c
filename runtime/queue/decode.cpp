// decode.cpp: PM4 and SDMA stream dumps (see decode.hpp).
#include "runtime/queue/decode.hpp"

#include <iomanip>
#include <sstream>
#include <string_view>
#include <tg/core/hex.hpp>

#include "runtime/queue/sdma_gen.hpp"

namespace tg::queue {
namespace {

using namespace pm4;

std::ostream& begin_line(std::ostream& out, std::size_t index) {
  return out << '[' << std::hex << std::setw(4) << std::setfill('0') << index << std::dec << std::setfill(' ')
             << "] ";
}

constexpr std::string_view compare_names[] = {"always", "<", "<=", "==", "!=", ">=", ">"};

std::string_view lookup(std::span<const named_value> table, std::uint32_t value, std::string_view fallback) {
  for (const named_value& nv : table)
    if (nv.value == value) return nv.name;
  return fallback;
}

std::string_view opcode_name(std::uint8_t op) {
  std::string_view name = lookup(packet3_opcodes, op, "");
  if (name.substr(0, 8) == "PACKET3_") name.remove_prefix(8);
  return name;
}

std::string event_name(std::uint32_t event) {
  std::ostringstream out;
  out << lookup(vgt_events, event, "event") << '(' << hex{event, 2} << ')';
  return out.str();
}

// Bit fields of a packet dword that nvd.h names by shift only; widths are tg's reading of the packet
// layouts (compare nvd.h's masked PACKET3_<packet>__<field> macros where it has them).
struct bits {
  std::string_view name;
  unsigned shift, width;
};
constexpr std::uint32_t get(std::uint32_t word, bits b) { return (word >> b.shift) & ((1u << b.width) - 1); }

// GCR_CNTL of ACQUIRE_MEM: shifts from nvd.h, each width the gap to the next shift (SEQ: up to
// PACKET3_ACQUIRE_MEM_GCR_RANGE_IS_PA).
constexpr bits acquire_gcr_bits[] = {
    {"GLI_INV", PACKET3_ACQUIRE_MEM_GCR_CNTL_GLI_INV.shift, 2},
    {"GL1_RANGE", PACKET3_ACQUIRE_MEM_GCR_CNTL_GL1_RANGE.shift, 2},
    {"GLM_WB", PACKET3_ACQUIRE_MEM_GCR_CNTL_GLM_WB.shift, 1},
    {"GLM_INV", PACKET3_ACQUIRE_MEM_GCR_CNTL_GLM_INV.shift, 1},
    {"GLK_WB", PACKET3_ACQUIRE_MEM_GCR_CNTL_GLK_WB.shift, 1},
    {"GLK_INV", PACKET3_ACQUIRE_MEM_GCR_CNTL_GLK_INV.shift, 1},
    {"GLV_INV", PACKET3_ACQUIRE_MEM_GCR_CNTL_GLV_INV.shift, 1},
    {"GL1_INV", PACKET3_ACQUIRE_MEM_GCR_CNTL_GL1_INV.shift, 1},
    {"GL2_US", PACKET3_ACQUIRE_MEM_GCR_CNTL_GL2_US.shift, 1},
    {"GL2_RANGE", PACKET3_ACQUIRE_MEM_GCR_CNTL_GL2_RANGE.shift, 2},
    {"GL2_DISCARD", PACKET3_ACQUIRE_MEM_GCR_CNTL_GL2_DISCARD.shift, 1},
    {"GL2_INV", PACKET3_ACQUIRE_MEM_GCR_CNTL_GL2_INV.shift, 1},
    {"GL2_WB", PACKET3_ACQUIRE_MEM_GCR_CNTL_GL2_WB.shift, 1},
    {"SEQ", PACKET3_ACQUIRE_MEM_GCR_CNTL_SEQ.shift, 2},
};

struct flag {
  std::string_view name;
  std::uint32_t mask;
};
constexpr flag release_gcr_flags[] = {
    {"GLM_WB", PACKET3_RELEASE_MEM_GCR_GLM_WB},   {"GLM_INV", PACKET3_RELEASE_MEM_GCR_GLM_INV},
    {"GLV_INV", PACKET3_RELEASE_MEM_GCR_GLV_INV}, {"GL1_INV", PACKET3_RELEASE_MEM_GCR_GL1_INV},
    {"GL2_US", PACKET3_RELEASE_MEM_GCR_GL2_US},   {"GL2_RANGE", PACKET3_RELEASE_MEM_GCR_GL2_RANGE},
    {"GL2_DISCARD", PACKET3_RELEASE_MEM_GCR_GL2_DISCARD}, {"GL2_INV", PACKET3_RELEASE_MEM_GCR_GL2_INV},
    {"GL2_WB", PACKET3_RELEASE_MEM_GCR_GL2_WB},   {"SEQ", PACKET3_RELEASE_MEM_GCR_SEQ},
};

void put_bits(std::ostream& out, std::uint32_t word, std::span<const bits> fields) {
  out << '{';
  const char* sep = "";
  for (bits b : fields)
    if (std::uint32_t v = get(word, b)) {
      out << sep << b.name;
      if (b.width > 1) out << '=' << v;
      sep = "|";
    }
  out << '}';
}

void put_flags(std::ostream& out, std::uint32_t word, std::span<const flag> flags) {
  out << '{';
  const char* sep = "";
  for (flag f : flags)
    if (word & f.mask) {
      out << sep << f.name;
      sep = "|";
    }
  out << '}';
}

class pm4_decoder {
 public:
  pm4_decoder(const reg_table& regs) : regs_(regs) {}

  // A register index as its name, or "reg 0x...".
  std::string reg_name(std::uint32_t index) const {
    if (const reg_info* r = find(index)) return std::string(r->name);
    std::ostringstream out;
    out << "reg " << hex{index};
    return out.str();
  }

  const reg_info* find(std::uint32_t index) const {
    for (std::size_t seg = std::size(gc_bases); seg-- > 0;)
      if (index >= gc_bases[seg])
        if (const reg_info* r = regs_.find_at(std::uint8_t(seg), index - gc_bases[seg])) return r;
    return nullptr;
  }

  void set_reg(std::ostream& out, std::string_view packet, std::uint32_t window, std::span<const std::uint32_t> p) {
    out << packet << " offset=" << hex{p[0]} << " (" << p.size() - 1 << (p.size() == 2 ? " register)\n" : " registers)\n");
    for (std::size_t i = 1; i < p.size(); ++i) {
      std::uint32_t index = window + p[0] + std::uint32_t(i - 1);
      out << "         ";
      if (const reg_info* r = find(index)) out << describe(regs_, *r, p[i]);
      else out << "reg " << hex{index} << " = " << hex{p[i], 8};
      out << '\n';
    }
  }

  void wait_reg_mem(std::ostream& out, std::span<const std::uint32_t> p) {
    constexpr bits function{"function", WAIT_REG_MEM_FUNCTION.shift, 3};  // nvd.h: PACKET3_WAIT_REG_MEM__FUNCTION
    constexpr bits mem_space{"mem_space", WAIT_REG_MEM_MEM_SPACE.shift, 1};
    constexpr bits operation{"operation", WAIT_REG_MEM_OPERATION.shift, 2};
    constexpr bits engine{"engine", WAIT_REG_MEM_ENGINE.shift, 1};
    std::uint32_t f = get(p[0], function);
    out << "WAIT_REG_MEM ";
    if (get(p[0], operation) == 1)
      out << "write " << hex{p[3]} << " to " << reg_name(p[1]) << ", then wait " << reg_name(p[2]);
    else if (get(p[0], mem_space)) out << "mem " << hex{std::uint64_t(p[2]) << 32 | p[1]};
    else out << reg_name(p[1]);
    out << " & " << hex{p[4]} << ' ' << (f < std::size(compare_names) ? compare_names[f] : "?") << ' ' << hex{p[3]}
        << " poll=" << p[5];
    if (get(p[0], engine)) out << " engine=pfp";
    out << '\n';
  }

  void release_mem(std::ostream& out, std::span<const std::uint32_t> p) {
    constexpr bits event_type{"event", PACKET3_RELEASE_MEM_EVENT_TYPE.shift, 6};  // as nvd.h: EVENT_WRITE__EVENT_TYPE
    constexpr bits event_index{"index", PACKET3_RELEASE_MEM_EVENT_INDEX.shift, 4};
    constexpr bits cache_policy{"cache_policy", PACKET3_RELEASE_MEM_CACHE_POLICY.shift, 2};
    constexpr bits data_sel{"data_sel", PACKET3_RELEASE_MEM_DATA_SEL.shift, 3};
    constexpr bits int_sel{"int_sel", PACKET3_RELEASE_MEM_INT_SEL.shift, 3};
    constexpr bits dst_sel{"dst_sel", PACKET3_RELEASE_MEM_DST_SEL.shift, 2};
    out << "RELEASE_MEM event=" << event_name(get(p[0], event_type)) << " index=" << get(p[0], event_index)
        << " gcr=";
    put_flags(out, p[0], release_gcr_flags);
    out << " cache_policy=" << get(p[0], cache_policy) << " data_sel=" << get(p[1], data_sel)
        << " int_sel=" << get(p[1], int_sel) << " dst_sel=" << get(p[1], dst_sel)
        << " addr=" << hex{std::uint64_t(p[3]) << 32 | p[2]} << " data=" << hex{std::uint64_t(p[5]) << 32 | p[4]}
        << " ctx=" << p[6] << '\n';
  }

  void decode(std::ostream& out, std::uint8_t op, std::span<const std::uint32_t> p) {
    switch (op) {
      case PACKET3_SET_SH_REG: return set_reg(out, "SET_SH_REG", PACKET3_SET_SH_REG_START, p);
      case PACKET3_SET_UCONFIG_REG: return set_reg(out, "SET_UCONFIG_REG", PACKET3_SET_UCONFIG_REG_START, p);
      case PACKET3_WAIT_REG_MEM:
        if (p.size() == 6) return wait_reg_mem(out, p);
        break;
      case PACKET3_RELEASE_MEM:
        if (p.size() == 7) return release_mem(out, p);
        break;
      case PACKET3_ACQUIRE_MEM:
        if (p.size() != 7) break;
        out << "ACQUIRE_MEM gcr_cntl=" << hex{p[6], 4};
        put_bits(out, p[6], acquire_gcr_bits);
        out << " coher_cntl=" << hex{p[0]} << " size=" << hex{std::uint64_t(p[2]) << 32 | p[1]}
            << " base=" << hex{std::uint64_t(p[4]) << 32 | p[3]} << " poll=" << p[5] << '\n';
        return;
      case PACKET3_DISPATCH_DIRECT:
        if (p.size() != 4) break;
        out << "DISPATCH_DIRECT " << p[0] << 'x' << p[1] << 'x' << p[2] << " workgroups, "
            << describe(regs_, regs_.reg("regCOMPUTE_DISPATCH_INITIATOR"), p[3]) << '\n';
        return;
      case PACKET3_EVENT_WRITE:
        if (p.size() != 1) break;
        out << "EVENT_WRITE event=" << event_name(get(p[0], {"", EVENT_TYPE.shift, 6}))
            << " index=" << get(p[0], {"", EVENT_INDEX.shift, 4}) << '\n';
        return;
      case PACKET3_INDIRECT_BUFFER:
        if (p.size() != 3) break;
        out << "INDIRECT_BUFFER addr=" << hex{std::uint64_t(p[1]) << 32 | p[0]} << " size=" << (p[2] & 0xFFFFF)
            << " dwords valid=" << ((p[2] & INDIRECT_BUFFER_VALID) != 0) << " vmid=" << ((p[2] >> 24) & 0xF)
            << '\n';
        return;
      case PACKET3_NOP: out << "NOP (" << p.size() + 1 << " dwords)\n"; return;
    }
    std::string_view name = opcode_name(op);
    if (name.empty()) out << "PACKET3 opcode " << hex{op, 2};
    else out << name;
    out << " (" << p.size() << " payload dwords):";
    for (std::size_t i = 0; i < p.size() && i < 8; ++i) out << ' ' << hex{p[i], 8};
    if (p.size() > 8) out << " ...";
    out << '\n';
  }

 private:
  const reg_table& regs_;
};

}  // namespace

std::string decode_pm4(std::span<const std::uint32_t> words, pm4::gfx_version gfx, const reg_table* regs) {
  pm4_decoder decoder(regs ? *regs : pm4::queue_regs(gfx));
  std::ostringstream out;
  for (std::size_t i = 0; i < words.size();) {
    std::uint32_t h = words[i];
    begin_line(out, i);
    if (h >> 30 != 3) {
      out << "not a type-3 header: " << hex{h, 8} << " (type " << (h >> 30) << "); stopping\n";
      break;
    }
    auto op = std::uint8_t(h >> 8);
    std::size_t count = (h >> 16) & 0x3FFF;
    if (op == PACKET3_NOP && count == 0x3FFF) {  // the one-dword NOP (pm4::nop_single_dword)
      out << "NOP (1 dword)\n";
      ++i;
      continue;
    }
    std::size_t len = count + 2;
    if (len > words.size() - i) {
      out << opcode_name(op) << ": truncated, needs " << len << " dwords, " << words.size() - i << " left\n";
      break;
    }
    decoder.decode(out, op, words.subspan(i + 1, len - 1));
    i += len;
  }
  return out.str();
}

namespace {

using namespace sdma;

const packet_layout* find_layout(std::uint8_t op, std::uint8_t sub_op) {
  for (const packet_layout& l : packet_layouts)
    if (l.op == op && (l.sub_op < 0 || l.sub_op == sub_op)) return &l;
  return nullptr;
}

bool ends_with(std::string_view s, std::string_view tail) {
  return s.size() >= tail.size() && s.substr(s.size() - tail.size()) == tail;
}

// Fields printed generically; an address split into <x>_31_<n> and <x>_63_32 (or _47_32) prints
// once, whole. Header flags print only when set.
void put_fields(std::ostream& out, const packet_layout& l, std::span<const std::uint32_t> p) {
  for (std::size_t i = 0; i < l.fields.size(); ++i) {
    const packet_field& f = l.fields[i];
    if (f.dword >= p.size() || (f.dword == 0 && (f.name == "op" || f.name == "sub_op"))) continue;
    std::uint32_t v = f.get(p[f.dword]);
    if (f.dword == 0 && v == 0) continue;
    std::size_t cut = f.name.rfind("_31_");
    if (cut != std::string_view::npos && i + 1 < l.fields.size()) {
      const packet_field& hi = l.fields[i + 1];
      std::string_view stem = f.name.substr(0, cut);
      if (hi.name.substr(0, cut) == stem && (ends_with(hi.name, "_63_32") || ends_with(hi.name, "_47_32")) &&
          hi.dword < p.size()) {
        std::uint64_t lo = std::uint64_t(f.get(p[f.dword])) << f.shift;
        out << ' ' << stem << '=' << hex{std::uint64_t(hi.get(p[hi.dword])) << 32 | lo};
        ++i;
        continue;
      }
    }
    out << ' ' << f.name << '=';
    if (f.name == "count" || f.name == "interval") out << v;
    else out << hex{v};
  }
}

}  // namespace

std::string decode_sdma(std::span<const std::uint32_t> words) {
  std::ostringstream out;
  for (std::size_t i = 0; i < words.size();) {
    std::uint32_t h = words[i];
    begin_line(out, i);
    if (h == 0) {  // a run of one-dword NOPs (zero-filled ring space)
      std::size_t n = 0;
      while (i + n < words.size() && words[i + n] == 0) ++n;
      out << "NOP x" << n << '\n';
      i += n;
      continue;
    }
    auto op = std::uint8_t(SDMA_PKT_NOP_HEADER_op.get(h));
    auto sub_op = std::uint8_t(SDMA_PKT_NOP_HEADER_sub_op.get(h));
    const packet_layout* l = find_layout(op, sub_op);
    if (!l) {
      out << "unknown SDMA op " << unsigned(op) << " sub_op " << unsigned(sub_op) << " (" << hex{h, 8}
          << "); stopping\n";
      break;
    }
    std::size_t fixed = l->dwords, len = fixed;
    if (op == SDMA_OP_NOP) len += SDMA_PKT_NOP_HEADER_count.get(h);
    if (op == SDMA_OP_WRITE && i + SDMA_PKT_WRITE_UNTILED_DW_3_count.dword < words.size())
      len += SDMA_PKT_WRITE_UNTILED_DW_3_count.get(words[i + SDMA_PKT_WRITE_UNTILED_DW_3_count.dword]) + 1;
    if (len > words.size() - i) {
      out << l->name << ": truncated, needs " << len << " dwords, " << words.size() - i << " left\n";
      break;
    }
    std::span<const std::uint32_t> p = words.subspan(i, len);
    out << l->name;
    put_fields(out, *l, p.first(fixed));
    if (len > fixed) {
      out << (op == SDMA_OP_NOP ? " skips" : " data:");
      for (std::size_t k = fixed; k < len && k < fixed + 8; ++k) out << ' ' << hex{p[k], 8};
      if (len > fixed + 8) out << " ... (" << len - fixed << " dwords)";
    }
    out << '\n';
    i += len;
  }
  return out.str();
}

}  // namespace tg::queue
