// mapping_model.hpp: what the tests believe is mapped, and the checks that hold the page tables'
// VRAM contents (read back by the independent walker) against it.
#pragma once
#include <algorithm>
#include <cstdint>
#include <iterator>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "runtime/memory/address.hpp"
#include "runtime/memory/map_plan.hpp"
#include "runtime/memory/page_table_walker.hpp"
#include "runtime/memory/pte_format.hpp"
#include "runtime/memory/tlb_invalidator.hpp"
#include <tg/core/error.hpp>

namespace tg::memory::test {

// A contiguous piece of VA mapped to contiguous PA with one set of flags.
struct run {
  std::uint64_t va = 0, size = 0, pa = 0;
  page_flags flags;
  bool operator==(const run&) const = default;
};

inline std::ostream& operator<<(std::ostream& out, const run& r) {
  return out << "va " << hex{r.va} << " +" << hex{r.size} << " -> pa " << hex{r.pa}
             << (r.flags.location == page_location::system ? " sys" : " vram") << (r.flags.snooped ? " snoop" : "")
             << (r.flags.uncached ? " uc" : "") << (r.flags.readable ? " r" : "") << (r.flags.writable ? " w" : "")
             << (r.flags.executable ? " x" : "");
}

// Joins runs that continue each other in VA and PA with equal flags (input sorted by VA).
inline std::vector<run> coalesce(const std::vector<run>& in) {
  std::vector<run> out;
  for (const run& r : in) {
    if (!out.empty()) {
      run& b = out.back();
      if (b.va + b.size == r.va && b.pa + b.size == r.pa && b.flags == r.flags) {
        b.size += r.size;
        continue;
      }
    }
    out.push_back(r);
  }
  return out;
}

inline page_flags flags_of(const walked_leaf& l) {
  page_flags f;
  f.location = l.system ? page_location::system : page_location::vram;
  f.snooped = l.snooped;
  f.uncached = l.mtype == 3;
  f.readable = l.readable;
  f.writable = l.writable;
  f.executable = l.executable;
  return f;
}

inline std::vector<run> runs_of(const page_table_walk& w) {
  std::vector<run> out;
  for (const walked_leaf& l : w.leaves) out.push_back({l.va.value, l.size_bytes, l.pa.value, flags_of(l)});
  return coalesce(out);
}

// The fragment promise (amdgpu_vm_pt.c:742): every byte of the aligned 2^(12 + fragment) block
// around a leaf is mapped, physically contiguous with the leaf, with the same flags. Also only
// MTYPE 0 or 3 may appear. Returns "" when every leaf keeps it.
// runs: runs_of(w), when the caller has it already.
inline std::string fragment_problems(const page_table_walk& w, const std::vector<run>& runs) {
  for (const walked_leaf& l : w.leaves) {
    if (l.mtype != 0 && l.mtype != 3) return str("leaf at ", l.va, " has MTYPE ", l.mtype);
    const std::uint64_t block = std::uint64_t{1} << (12 + l.fragment);
    const std::uint64_t start = l.va.value & ~(block - 1);
    auto it = std::upper_bound(runs.begin(), runs.end(), start, [](std::uint64_t v, const run& r) { return v < r.va; });
    if (it == runs.begin()) return str("leaf at ", l.va, ": fragment block start ", hex{start}, " is unmapped");
    --it;
    if (it->va + it->size < start + block || l.va.value < it->va || l.va.value + l.size_bytes > it->va + it->size)
      return str("leaf at ", l.va, " claims fragment ", l.fragment, " but ", hex{start}, " +", hex{block},
                 " is not one contiguous run");
  }
  return "";
}

inline std::string fragment_problems(const page_table_walk& w) { return fragment_problems(w, runs_of(w)); }

// The set of mapped runs, split and joined as the test maps and unmaps.
class mapping_model {
 public:
  bool overlaps(std::uint64_t va, std::uint64_t size) const {
    auto it = runs_.lower_bound(va);
    if (it != runs_.end() && it->first < va + size) return true;
    if (it != runs_.begin() && std::prev(it)->second.va + std::prev(it)->second.size > va) return true;
    return false;
  }
  bool covers(std::uint64_t va, std::uint64_t size) const {
    std::uint64_t at = va;
    auto it = runs_.upper_bound(va);
    if (it == runs_.begin()) return false;
    for (--it; it != runs_.end() && at < va + size; ++it) {
      if (it->second.va > at || it->second.va + it->second.size <= at) return false;
      at = it->second.va + it->second.size;
    }
    return at >= va + size;
  }
  void insert(std::uint64_t va, std::span<const phys_chunk> chunks, page_flags flags) {
    for (const phys_chunk& c : chunks) {
      runs_[va] = {va, c.size_bytes, c.pa.value, flags};
      va += c.size_bytes;
    }
  }
  void erase(std::uint64_t va, std::uint64_t size) {
    split_at(va);
    split_at(va + size);
    runs_.erase(runs_.lower_bound(va), runs_.lower_bound(va + size));
  }
  std::vector<run> runs() const {
    std::vector<run> out;
    for (const auto& [va, r] : runs_) out.push_back(r);
    return coalesce(out);
  }
  std::size_t pieces() const { return runs_.size(); }
  const std::map<std::uint64_t, run>& raw() const { return runs_; }

 private:
  void split_at(std::uint64_t va) {
    auto it = runs_.upper_bound(va);
    if (it == runs_.begin()) return;
    run& r = std::prev(it)->second;
    if (r.va >= va || r.va + r.size <= va) return;
    run right{va, r.va + r.size - va, r.pa + (va - r.va), r.flags};
    r.size = va - r.va;
    runs_[va] = right;
  }
  std::map<std::uint64_t, run> runs_;
};

// Counts invalidations and remembers the last range.
struct counting_tlb final : tlb_invalidator {
  void invalidate_tlb(gpu_va first, std::uint64_t size_bytes) override {
    ++calls;
    last_first = first;
    last_size = size_bytes;
  }
  std::uint64_t calls = 0;
  gpu_va last_first;
  std::uint64_t last_size = 0;
};

// Garbage that VRAM holds before the page tables write it (fresh tables must be written whole).
inline constexpr std::uint64_t vram_garbage = 0xDEAD'BEEF'F00D'CAFFull;  // VALID set: a stale word looks like an entry

}  // namespace tg::memory::test
