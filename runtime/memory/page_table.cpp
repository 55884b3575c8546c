// page_table.cpp: map, unmap and remap over the host copy of the tables, then one write-out per
// change (see page_table.hpp).
//
// Every change runs in three steps: check and reserve (may throw, changes nothing), edit the host
// copy (cannot fail: every table it may create is already reserved), commit (write the touched
// entries to VRAM, children before parents, then invalidate the TLB, then free detached tables).
#include "runtime/memory/page_table.hpp"

#include <algorithm>
#include <array>
#include <optional>
#include <utility>

#include <tg/core/error.hpp>

namespace tg::memory {

struct page_table::table {
  gpu_pa pa;
  pt_level level = pt_level::pdb2;
  std::uint64_t first = 0;  // VA (relative to va_base) of entry 0
  std::uint32_t valid_count = 0;
  std::uint32_t dirty_lo = pt_entries, dirty_hi = 0;  // entries changed since the last write-out
  std::array<std::uint64_t, pt_entries> entries{};    // what VRAM holds (after the next write-out)
  std::vector<std::unique_ptr<table>> children;       // 512 for directories, none for a PTB

  std::uint64_t entry_bytes() const { return level_coverage(level); }
  std::uint64_t entry_first(std::uint32_t i) const { return first + i * entry_bytes(); }
  std::uint32_t index(std::uint64_t rel) const { return std::uint32_t((rel - first) >> level_shift(level)); }
  bool has_child(std::uint32_t i) const { return !children.empty() && children[i]; }
  // [lo, hi): the entries whose VA meets r (r meets this table).
  std::pair<std::uint32_t, std::uint32_t> entries_meeting(range r) const {
    const std::uint32_t lo = r.first > first ? index(r.first) : 0;
    const std::uint64_t hi = ((r.end - first - 1) >> level_shift(level)) + 1;
    return {lo, std::uint32_t(std::min<std::uint64_t>(pt_entries, hi))};
  }
};

// One change in flight: tables reserved for it and tables it unlinked.
struct page_table::edit {
  explicit edit(vram_allocator& a) : allocator(a) {}
  ~edit() {
    for (auto& t : spare) allocator.free(t->pa);  // reserved but not needed (or the change failed early)
  }
  edit(const edit&) = delete;
  edit& operator=(const edit&) = delete;

  vram_allocator& allocator;
  std::vector<std::unique_ptr<table>> spare;
  std::vector<std::unique_ptr<table>> detached;
};

namespace {

// Host-side bug check; never user input.
void check_internal(bool ok, const char* what) {
  if (!ok) TG_UNREACHABLE(what);
}

}  // namespace

page_table::page_table(gfx_gen gen, gpu_va va_base, std::uint64_t va_size_bytes, vram_allocator& tables,
                       vram_access& vram, tlb_invalidator& tlb)
    : gen_(gen), va_base_(va_base), va_size_(va_size_bytes), allocator_(tables), vram_(vram), tlb_(tlb) {
  constexpr std::uint64_t max_va_bytes = level_coverage(pt_level::pdb2) * pt_entries;  // 2^48
  if (va_base.value % page_bytes != 0 || va_size_bytes == 0 || va_size_bytes % page_bytes != 0 ||
      va_size_bytes > max_va_bytes || va_base.value + va_size_bytes < va_base.value)
    throw usage_error(str("page tables: VA window base ", va_base, " size ", hex{va_size_bytes},
                          " must be 4 KiB-aligned, non-empty and at most 2^48 bytes"));
  root_ = std::make_unique<table>();
  root_->children.resize(pt_entries);
  root_->pa = allocator_.allocate(pt_table_bytes, pt_table_bytes);
  try {
    vram_.write_words(root_->pa, root_->entries);  // VRAM starts as garbage: the root must read all-invalid
  } catch (...) {
    allocator_.free(root_->pa);
    throw;
  }
  table_count_ = 1;
}

page_table::~page_table() {
  // Depth-first, children first; the allocator outlives us by contract.
  std::vector<table*> stack{root_.get()};
  while (!stack.empty()) {
    table* t = stack.back();
    stack.pop_back();
    for (auto& c : t->children)
      if (c) stack.push_back(c.get());
    allocator_.free(t->pa);
  }
}

gpu_pa page_table::root_table() const { return root_->pa; }

// ---- checks (throw before anything changes) --------------------------------------------------

page_table::range page_table::checked_range(const char* op, gpu_va va, std::uint64_t size_bytes) const {
  if (size_bytes == 0) throw usage_error(str(op, " at ", va, ": size is 0"));
  if (va.value % page_bytes != 0 || size_bytes % page_bytes != 0)
    throw usage_error(str(op, " ", va_range_text{va, size_bytes}, ": address and size must be multiples of 4 KiB"));
  if (va < va_base_ || va.value - va_base_.value > va_size_ || size_bytes > va_size_ - (va.value - va_base_.value))
    throw usage_error(str(op, " ", va_range_text{va, size_bytes}, " is outside the page table's VA window ",
                          va_range_text{va_base_, va_size_}));
  const std::uint64_t rel = va.value - va_base_.value;
  return {rel, rel + size_bytes};
}

std::vector<phys_chunk> page_table::checked_chunks(const char* op, gpu_va va, std::span<const phys_chunk> chunks,
                                                   page_flags flags, std::uint64_t& total) const {
  if (chunks.empty()) throw usage_error(str(op, " at ", va, ": no physical chunks given"));
  if (flags.snooped && flags.location == page_location::vram)
    throw usage_error(str(op, " at ", va, ": snooped applies to system memory only"));
  total = 0;
  for (std::size_t k = 0; k < chunks.size(); ++k) {
    const phys_chunk& c = chunks[k];
    if (c.size_bytes == 0 || c.size_bytes % page_bytes != 0 || c.pa.value % page_bytes != 0)
      throw usage_error(str(op, " at ", va, ": chunk ", k, " (pa ", c.pa, ", ", c.size_bytes,
                            " bytes) must be non-empty and 4 KiB-aligned"));
    if (c.pa.value >= max_physical_address || c.size_bytes > max_physical_address - c.pa.value)
      throw usage_error(str(op, " at ", va, ": chunk ", k, " (pa ", c.pa, ", ", c.size_bytes,
                            " bytes) ends beyond the GPU's 44-bit physical address space"));
    if (c.size_bytes > va_size_ - total)
      throw usage_error(str(op, " at ", va, ": the chunks add up to more than the VA window (", va_size_, " bytes)"));
    total += c.size_bytes;
  }
  return merge_contiguous(chunks);
}

void page_table::require_unmapped(const char* op, gpu_va va, std::uint64_t size_bytes, range r) const {
  // The first valid leaf inside r, if any.
  auto first_leaf = [r](auto& self, const table& t) -> std::optional<std::uint64_t> {
    const auto [lo, hi] = t.entries_meeting(r);
    for (std::uint32_t i = lo; i < hi; ++i) {
      if (t.has_child(i)) {
        if (auto at = self(self, *t.children[i])) return at;
      } else if (t.entries[i] & pte_bits::valid) {
        return std::max(r.first, t.entry_first(i));
      }
    }
    return std::nullopt;
  };
  if (auto at = first_leaf(first_leaf, *root_))
    throw usage_error(str(op, " ", va_range_text{va, size_bytes}, ": ", va_base_ + *at,
                          " is already mapped (unmap it first, or remap)"));
}

void page_table::require_mapped(const char* op, gpu_va va, std::uint64_t size_bytes, range r) const {
  struct problem {
    std::uint64_t at;
    std::uint64_t split_leaf_bytes;  // 0: a hole at `at`; else a leaf [at, at + this) sticking out of r
  };
  auto first_problem = [r](auto& self, const table& t) -> std::optional<problem> {
    const auto [lo, hi] = t.entries_meeting(r);
    for (std::uint32_t i = lo; i < hi; ++i) {
      const std::uint64_t first = t.entry_first(i);
      if (t.has_child(i)) {
        if (auto p = self(self, *t.children[i])) return p;
      } else if (!(t.entries[i] & pte_bits::valid)) {
        return problem{std::max(r.first, first), 0};
      } else if (first < r.first || first + t.entry_bytes() > r.end) {
        return problem{first, t.entry_bytes()};
      }
    }
    return std::nullopt;
  };
  const auto p = first_problem(first_problem, *root_);
  if (!p) return;
  if (p->split_leaf_bytes == 0)
    throw usage_error(str(op, " ", va_range_text{va, size_bytes}, ": ", va_base_ + p->at,
                          " is not mapped (unmapped twice, or not the range that was mapped?)"));
  throw usage_error(str(op, " ", va_range_text{va, size_bytes}, " cuts the ", p->split_leaf_bytes >> 20,
                        " MiB page ", va_range_text{va_base_ + p->at, p->split_leaf_bytes},
                        "; unmap or remap whole mappings"));
}

const page_table::table* page_table::find_table(pt_level level, std::uint64_t rel) const {
  const table* t = root_.get();
  while (t && t->level != level) {
    const std::uint32_t i = t->index(rel);
    t = t->has_child(i) ? t->children[i].get() : nullptr;
  }
  return t;
}

// How many tables write_leaves will create: for every level a block needs below the root, each
// region one table of that level covers, counted once, if no table is there yet. Blocks come in
// increasing VA, so remembering the last region per level removes duplicates.
std::size_t page_table::count_new_tables(const std::vector<leaf_block>& plan) const {
  std::array<std::uint64_t, 4> last;
  last.fill(~std::uint64_t{0});
  std::size_t count = 0;
  for (const leaf_block& b : plan) {
    const std::uint64_t first = b.va.value - va_base_.value, end = first + b.size_bytes;
    for (unsigned l = unsigned(pt_level::pdb1); l <= unsigned(b.level); ++l) {
      const unsigned region_shift = level_shift(pt_level(l - 1));  // a level-l table covers one parent entry
      for (std::uint64_t region = first >> region_shift; region <= (end - 1) >> region_shift; ++region) {
        if (region == last[l]) continue;
        last[l] = region;
        if (!find_table(pt_level(l), region << region_shift)) ++count;
      }
    }
  }
  return count;
}

std::uint64_t page_table::new_table_bytes(gpu_va va, std::span<const phys_chunk> chunks) const {
  std::uint64_t total = 0;
  const auto merged = checked_chunks("new_table_bytes", va, chunks, page_flags{}, total);
  checked_range("new_table_bytes", va, total);
  return count_new_tables(plan_leaf_blocks(va_base_, va, merged)) * pt_table_bytes;
}

void page_table::reserve_tables(edit& e, std::size_t count, const char* op, gpu_va va, std::uint64_t size_bytes) {
  e.spare.reserve(count);
  for (std::size_t k = 0; k < count; ++k) {
    const auto pa = allocator_.try_allocate(pt_table_bytes, pt_table_bytes);
    if (!pa) {
      for (auto& t : e.spare) allocator_.free(t->pa);  // back as it was, so the message tells the truth
      e.spare.clear();
      throw device_error(str("page tables: ", op, " ", va_range_text{va, size_bytes}, " needs ", count,
                             " new page tables (", count * pt_table_bytes, " bytes of VRAM) but the allocator has ",
                             allocator_.free_bytes(), " bytes free (largest block ",
                             allocator_.state().largest_free_block(),
                             "); nothing was changed (free VRAM or give the page tables a larger pool)"));
    }
    std::unique_ptr<table> t;
    try {
      t = std::make_unique<table>();
    } catch (...) {
      allocator_.free(*pa);
      throw;
    }
    t->pa = *pa;
    e.spare.push_back(std::move(t));
  }
}

void page_table::require_usable() const {
  if (broken_)
    throw device_error("page tables: an earlier update failed while writing VRAM, so the GPU's copy of the "
                       "tables is unknown; destroy and re-create this page table");
}

// ---- editing the host copy (cannot fail for lack of VRAM) --------------------------------------

void page_table::set_entry(table& t, std::uint32_t i, std::uint64_t value) {
  const bool was = t.entries[i] & pte_bits::valid, now = value & pte_bits::valid;
  t.valid_count = t.valid_count + (now ? 1u : 0u) - (was ? 1u : 0u);
  t.entries[i] = value;
  t.dirty_lo = std::min(t.dirty_lo, i);
  t.dirty_hi = std::max(t.dirty_hi, i + 1);
}

page_table::table& page_table::child_or_new(edit& e, table& parent, std::uint32_t i) {
  if (parent.has_child(i)) return *parent.children[i];
  check_internal(!(parent.entries[i] & pte_bits::valid), "page_table: a leaf sits where a table is needed");
  check_internal(!e.spare.empty(), "page_table: fewer tables reserved than the mapping needs");
  std::unique_ptr<table> t = std::move(e.spare.back());
  e.spare.pop_back();
  t->level = pt_level(unsigned(parent.level) + 1);
  t->first = parent.entry_first(i);
  if (t->level != pt_level::ptb) t->children.resize(pt_entries);
  t->dirty_lo = 0;  // a new table is written whole: VRAM held garbage there
  t->dirty_hi = pt_entries;
  table& ref = *t;
  parent.children[i] = std::move(t);
  ++table_count_;
  set_entry(parent, i, encode_pde(ref.pa));
  return ref;
}

void page_table::detach(edit& e, table& parent, std::uint32_t i) {
  check_internal(parent.children[i]->valid_count == 0, "page_table: detaching a table that still maps pages");
  e.detached.push_back(std::move(parent.children[i]));
  --table_count_;
  set_entry(parent, i, 0);
}

void page_table::write_leaves(edit& e, const std::vector<leaf_block>& plan, page_flags flags) {
  for (const leaf_block& b : plan) {
    const std::uint64_t step = level_coverage(b.level), end = b.va.value - va_base_.value + b.size_bytes;
    std::uint64_t rel = b.va.value - va_base_.value;
    gpu_pa pa = b.pa;
    while (rel < end) {
      table* t = root_.get();
      while (t->level != b.level) t = &child_or_new(e, *t, t->index(rel));
      for (std::uint32_t i = t->index(rel); i < pt_entries && rel < end; ++i, rel += step, pa = pa + step) {
        if (t->has_child(i)) detach(e, *t, i);  // remap: a PTB emptied by clear() gives way to a 2 MiB leaf
        set_entry(*t, i, encode_leaf(gen_, b.level, pa, flags, b.fragment));
      }
    }
  }
}

void page_table::clear(edit& e, table& t, range r, bool free_empty) {
  const auto [lo, hi] = t.entries_meeting(r);
  for (std::uint32_t i = lo; i < hi; ++i) {
    if (t.has_child(i)) {
      clear(e, *t.children[i], r, free_empty);
      if (free_empty && t.children[i]->valid_count == 0) detach(e, t, i);
    } else if (t.entries[i] & pte_bits::valid) {
      set_entry(t, i, 0);
    }
  }
}

void page_table::free_empty(edit& e, table& t, range r) {
  const auto [lo, hi] = t.entries_meeting(r);
  for (std::uint32_t i = lo; i < hi; ++i) {
    if (!t.has_child(i)) continue;
    free_empty(e, *t.children[i], r);
    if (t.children[i]->valid_count == 0) detach(e, t, i);
  }
}

struct page_table::leaf_ref {
  table* t;
  std::uint32_t i;
  std::uint64_t first;  // relative VA of the leaf
};

std::optional<page_table::leaf_ref> page_table::leaf_containing(std::uint64_t rel) {
  table* t = root_.get();
  for (;;) {
    const std::uint32_t i = t->index(rel);
    if (t->has_child(i)) {
      t = t->children[i].get();
      continue;
    }
    if (!(t->entries[i] & pte_bits::valid)) return std::nullopt;
    return leaf_ref{t, i, t->entry_first(i)};
  }
}

// A leaf promises that its whole aligned fragment block maps contiguous memory with its flags
// (amdgpu_vm_pt.c:742). After part of a block was unmapped or remapped, leaves left outside the
// range would still claim it, and the TLB could serve the changed pages from their fragment.
// Shrink each such claim to the largest aligned block that stays clear of r, walking outward from
// both ends while claims reach in. (Linux re-writes the remainder of a split mapping for the same
// reason: amdgpu_vm_bo_clear_mappings.) 2 MiB leaves never drop below fragment 9: the range cannot
// cut them. Returns r widened to the leaves changed.
page_table::range page_table::shrink_fragments_around(range r) {
  auto block_first = [](std::uint64_t rel, unsigned f) { return rel >> (12 + f) << (12 + f); };
  range touched = r;
  for (std::uint64_t at = r.first; at > 0;) {
    const auto l = leaf_containing(at - 1);
    if (!l) break;
    const std::uint64_t e = l->t->entries[l->i];
    unsigned f = fragment_of(e);
    if (block_first(l->first, f) + (std::uint64_t{1} << (12 + f)) <= r.first) break;
    while (f > 0 && block_first(l->first, f) + (std::uint64_t{1} << (12 + f)) > r.first) --f;
    set_entry(*l->t, l->i, with_fragment(e, f));
    touched.first = at = l->first;
  }
  while (touched.end < va_size_) {
    const auto l = leaf_containing(touched.end);
    if (!l) break;
    const std::uint64_t e = l->t->entries[l->i];
    unsigned f = fragment_of(e);
    if (block_first(l->first, f) >= r.end) break;
    while (f > 0 && block_first(l->first, f) < r.end) --f;
    set_entry(*l->t, l->i, with_fragment(e, f));
    touched.end = l->first + l->t->entry_bytes();
  }
  return touched;
}

// ---- commit ------------------------------------------------------------------------------------

// Children before parents, so the GPU never follows a new PDE into a table not yet written.
void page_table::write_dirty(table& t, range r) {
  if (!t.children.empty()) {
    const auto [lo, hi] = t.entries_meeting(r);
    for (std::uint32_t i = lo; i < hi; ++i)
      if (t.children[i]) write_dirty(*t.children[i], r);
  }
  if (t.dirty_lo < t.dirty_hi) {
    vram_.write_words(t.pa + 8 * t.dirty_lo,
                      std::span<const std::uint64_t>(t.entries.data() + t.dirty_lo, t.dirty_hi - t.dirty_lo));
    t.dirty_lo = pt_entries;
    t.dirty_hi = 0;
  }
}

void page_table::commit(edit& e, range touched) {
  try {
    write_dirty(*root_, touched);
  } catch (...) {
    broken_ = true;
    throw;
  }
  // If the flush throws, the detached tables are leaked rather than reused while the GPU may still
  // hold translations through them.
  tlb_.invalidate_tlb(va_base_ + touched.first, touched.end - touched.first);
  for (auto& t : e.detached) allocator_.free(t->pa);
  e.detached.clear();
}

// ---- the three operations ----------------------------------------------------------------------

void page_table::map(gpu_va va, std::span<const phys_chunk> chunks, page_flags flags) {
  require_usable();
  std::uint64_t total = 0;
  const auto merged = checked_chunks("map", va, chunks, flags, total);
  const range r = checked_range("map", va, total);
  require_unmapped("map", va, total, r);
  const auto plan = plan_leaf_blocks(va_base_, va, merged);
  edit e(allocator_);
  reserve_tables(e, count_new_tables(plan), "map", va, total);
  try {
    write_leaves(e, plan, flags);
  } catch (...) {  // only host allocation can fail here
    broken_ = true;
    throw;
  }
  check_internal(e.spare.empty(), "page_table: reserved more tables than the mapping used");
  commit(e, r);
}

void page_table::unmap(gpu_va va, std::uint64_t size_bytes) {
  require_usable();
  const range r = checked_range("unmap", va, size_bytes);
  require_mapped("unmap", va, size_bytes, r);
  edit e(allocator_);
  range touched = r;
  try {
    clear(e, *root_, r, true);
    touched = shrink_fragments_around(r);
  } catch (...) {
    broken_ = true;
    throw;
  }
  commit(e, touched);
}

void page_table::remap(gpu_va va, std::span<const phys_chunk> chunks, page_flags flags) {
  require_usable();
  std::uint64_t total = 0;
  const auto merged = checked_chunks("remap", va, chunks, flags, total);
  const range r = checked_range("remap", va, total);
  require_mapped("remap", va, total, r);
  const auto plan = plan_leaf_blocks(va_base_, va, merged);
  edit e(allocator_);
  // clear() below keeps the tables, so the count against today's tables is exact.
  reserve_tables(e, count_new_tables(plan), "remap", va, total);
  range touched = r;
  try {
    clear(e, *root_, r, false);
    write_leaves(e, plan, flags);
    free_empty(e, *root_, r);
    touched = shrink_fragments_around(r);
  } catch (...) {
    broken_ = true;
    throw;
  }
  check_internal(e.spare.empty(), "page_table: reserved more tables than the remap used");
  commit(e, touched);
}

}  // namespace tg::memory
