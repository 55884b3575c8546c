// tlsf.cpp: two-level segregated-fit allocation, splitting and merging (see tlsf.hpp).
#include "runtime/memory/tlsf.hpp"

#include <algorithm>
#include <bit>

#include "runtime/memory/address.hpp"
#include <tg/core/error.hpp>

namespace tg::memory {

namespace {

bool is_power_of_two(std::uint64_t x) { return x != 0 && (x & (x - 1)) == 0; }
unsigned floor_log2(std::uint64_t x) { return 63u - unsigned(std::countl_zero(x)); }

}  // namespace

tlsf::tlsf(std::string name, std::uint64_t base, std::uint64_t size_bytes, std::uint64_t granule_bytes)
    : name_(std::move(name)), base_(base), size_(size_bytes), granule_(granule_bytes) {
  for (auto& row : heads_) row.fill(none);
  if (!is_power_of_two(granule_))
    throw usage_error(str(name_, ": granule ", granule_, " is not a power of two"));
  if (size_ == 0 || size_ > std::uint64_t{1} << 62 || size_ % granule_ != 0 || base_ % granule_ != 0 ||
      base_ + size_ < base_)
    throw usage_error(str(name_, ": range base ", hex{base_}, " size ", hex{size_},
                          " must be non-empty, at most 2^62 bytes, inside 64 bits and a multiple of the ",
                          granule_, "-byte granule"));
  first_ = new_node();
  nodes_[first_].address = base_;
  nodes_[first_].size = size_;
  insert_free(first_);
  free_bytes_ = size_;
}

// Size classes, in granules n: n < 16 has a class of its own (fl 0, sl n); above, fl counts the
// power of two and sl the 16th of it. So a class holds sizes [lo, lo + 2^(m-4) granules).
tlsf::bucket tlsf::bucket_of(std::uint64_t size) const {
  const std::uint64_t n = size / granule_;
  if (n < sl_count) return {0, unsigned(n)};
  const unsigned m = floor_log2(n);
  return {m - sl_log2 + 1, unsigned(n >> (m - sl_log2)) - sl_count};
}

// The first block of the first non-empty class whose every member is >= size: round the size up
// to the next class boundary, then two bitmap scans. O(1).
std::uint64_t tlsf::round_up_to_class(std::uint64_t size) const {
  std::uint64_t n = size / granule_;
  if (n >= sl_count) n += (std::uint64_t{1} << (floor_log2(n) - sl_log2)) - 1;
  return n > size_ / granule_ ? size_ + granule_ : n * granule_;  // beyond the range: nothing that big
}

std::uint32_t tlsf::find_good_fit(std::uint64_t size) const {
  const std::uint64_t rounded = round_up_to_class(size);
  if (rounded > size_) return none;
  const bucket b = bucket_of(rounded);
  std::uint32_t sl_map = sl_bitmap_[b.fl] & (~0u << b.sl);
  unsigned fl = b.fl;
  if (sl_map == 0) {
    const std::uint64_t fl_map = b.fl + 1 < fl_count ? fl_bitmap_ & (~std::uint64_t{0} << (b.fl + 1)) : 0;
    if (fl_map == 0) return none;
    fl = unsigned(std::countr_zero(fl_map));
    sl_map = sl_bitmap_[fl];
  }
  return heads_[fl][unsigned(std::countr_zero(sl_map))];
}

bool tlsf::fits(const node& n, std::uint64_t size, std::uint64_t align) const {
  const std::uint64_t start = (n.address + align - 1) & ~(align - 1);
  return start >= n.address && start - n.address <= n.size && n.size - (start - n.address) >= size;
}

// When the padded good fit fails, a block of the right size may still happen to be aligned (2 MiB
// chunks in a fragmented VRAM, naturally aligned VA). Look at the first few blocks of each class
// from the request's own class up to the padded one (good fit searched above it), or to the top
// when the padded size rounds past the whole range: a constant bound (at most 64 x 16 classes,
// 4 blocks each), so allocation stays O(1) and never walks a free list.
std::uint32_t tlsf::find_aligned_fit(std::uint64_t size, std::uint64_t align, std::uint64_t padded) const {
  constexpr int blocks_per_class = 4;
  const bucket lo = bucket_of(size);
  const bucket hi = bucket_of(round_up_to_class(padded) > size_ ? size_ : padded);
  for (unsigned fl = lo.fl; fl <= hi.fl && fl < fl_count; ++fl) {
    if ((fl_bitmap_ >> fl & 1) == 0) continue;
    std::uint32_t sl_map = sl_bitmap_[fl];
    if (fl == lo.fl) sl_map &= ~0u << lo.sl;
    while (sl_map != 0) {
      const unsigned sl = unsigned(std::countr_zero(sl_map));
      sl_map &= sl_map - 1;
      std::uint32_t i = heads_[fl][sl];
      for (int k = 0; k < blocks_per_class && i != none; ++k, i = nodes_[i].next_free)
        if (fits(nodes_[i], size, align)) return i;
    }
  }
  return none;
}

std::uint64_t tlsf::checked_request(std::uint64_t size_bytes, std::uint64_t& align_bytes) const {
  if (size_bytes == 0) throw usage_error(str(name_, ": allocation of 0 bytes"));
  if (align_bytes == 0) align_bytes = granule_;
  if (!is_power_of_two(align_bytes))
    throw usage_error(str(name_, ": alignment ", align_bytes, " is not a power of two"));
  align_bytes = std::max(align_bytes, granule_);
  if (size_bytes > size_) return size_ + granule_;  // can never fit; keeps the rounding below in range
  return (size_bytes + granule_ - 1) & ~(granule_ - 1);
}

std::optional<std::uint64_t> tlsf::try_allocate(std::uint64_t size_bytes, std::uint64_t align_bytes) {
  const std::uint64_t size = checked_request(size_bytes, align_bytes);
  if (size > free_bytes_) return std::nullopt;
  // A block of size + align - granule bytes always holds an aligned start (the reference's rule).
  const std::uint64_t padded = size + (align_bytes - granule_);
  std::uint32_t i = padded >= size && padded <= size_ ? find_good_fit(padded) : none;
  if (i == none) i = find_aligned_fit(size, align_bytes, padded >= size ? padded : size_);
  if (i == none) return std::nullopt;

  remove_free(i);
  const std::uint64_t start = (nodes_[i].address + align_bytes - 1) & ~(align_bytes - 1);
  if (start != nodes_[i].address) {
    const std::uint32_t right = split(i, start - nodes_[i].address);
    insert_free(i);
    i = right;
  }
  if (nodes_[i].size > size) insert_free(split(i, size));
  nodes_[i].is_free = false;
  free_bytes_ -= size;
  allocated_.emplace(start, i);
  return start;
}

std::uint64_t tlsf::allocate(std::uint64_t size_bytes, std::uint64_t align_bytes) {
  if (auto at = try_allocate(size_bytes, align_bytes)) return *at;
  throw device_error(str(name_, ": out of space: cannot allocate ", size_bytes, " bytes aligned to ",
                         std::max(align_bytes, granule_), " (", free_bytes_, " of ", size_,
                         " bytes free, largest free block ", largest_free_block(), " bytes)"));
}

void tlsf::free(std::uint64_t address) {
  const auto it = allocated_.find(address);
  if (it == allocated_.end())
    throw usage_error(str(name_, ": free of ", hex{address},
                          ", which is not the start of an allocated block (double free?)"));
  std::uint32_t i = it->second;
  allocated_.erase(it);
  nodes_[i].is_free = true;
  free_bytes_ += nodes_[i].size;
  // Merge with the neighbours, always keeping the left node (so first_ stays valid).
  const std::uint32_t right = nodes_[i].next_phys;
  if (right != none && nodes_[right].is_free) {
    remove_free(right);
    nodes_[i].size += nodes_[right].size;
    nodes_[i].next_phys = nodes_[right].next_phys;
    if (nodes_[i].next_phys != none) nodes_[nodes_[i].next_phys].prev_phys = i;
    delete_node(right);
  }
  const std::uint32_t left = nodes_[i].prev_phys;
  if (left != none && nodes_[left].is_free) {
    remove_free(left);
    nodes_[left].size += nodes_[i].size;
    nodes_[left].next_phys = nodes_[i].next_phys;
    if (nodes_[left].next_phys != none) nodes_[nodes_[left].next_phys].prev_phys = left;
    delete_node(i);
    i = left;
  }
  insert_free(i);
}

std::uint64_t tlsf::allocation_size(std::uint64_t address) const {
  const auto it = allocated_.find(address);
  if (it == allocated_.end())
    throw usage_error(str(name_, ": ", hex{address}, " is not the start of an allocated block"));
  return nodes_[it->second].size;
}

std::uint64_t tlsf::largest_free_block() const {
  if (fl_bitmap_ == 0) return 0;
  const unsigned fl = floor_log2(fl_bitmap_);
  std::uint64_t largest = 0;
  for (std::uint32_t i = heads_[fl][floor_log2(sl_bitmap_[fl])]; i != none; i = nodes_[i].next_free)
    largest = std::max(largest, nodes_[i].size);
  return largest;
}

void tlsf::insert_free(std::uint32_t i) {
  node& n = nodes_[i];
  n.is_free = true;
  const bucket b = bucket_of(n.size);
  n.prev_free = none;
  n.next_free = heads_[b.fl][b.sl];
  if (n.next_free != none) nodes_[n.next_free].prev_free = i;
  heads_[b.fl][b.sl] = i;
  sl_bitmap_[b.fl] |= 1u << b.sl;
  fl_bitmap_ |= std::uint64_t{1} << b.fl;
}

void tlsf::remove_free(std::uint32_t i) {
  node& n = nodes_[i];
  const bucket b = bucket_of(n.size);
  if (n.prev_free != none) nodes_[n.prev_free].next_free = n.next_free;
  else heads_[b.fl][b.sl] = n.next_free;
  if (n.next_free != none) nodes_[n.next_free].prev_free = n.prev_free;
  n.prev_free = n.next_free = none;
  if (heads_[b.fl][b.sl] == none) {
    sl_bitmap_[b.fl] &= ~(1u << b.sl);
    if (sl_bitmap_[b.fl] == 0) fl_bitmap_ &= ~(std::uint64_t{1} << b.fl);
  }
}

std::uint32_t tlsf::new_node() {
  if (!spare_nodes_.empty()) {
    const std::uint32_t i = spare_nodes_.back();
    spare_nodes_.pop_back();
    nodes_[i] = node{};
    return i;
  }
  nodes_.emplace_back();
  return std::uint32_t(nodes_.size() - 1);
}

void tlsf::delete_node(std::uint32_t i) { spare_nodes_.push_back(i); }

// Cuts block i (not in a free list) after first_size bytes; the new right part is not in a list.
std::uint32_t tlsf::split(std::uint32_t i, std::uint64_t first_size) {
  const std::uint32_t r = new_node();  // may reallocate nodes_: index, don't hold references
  nodes_[r].address = nodes_[i].address + first_size;
  nodes_[r].size = nodes_[i].size - first_size;
  nodes_[r].prev_phys = i;
  nodes_[r].next_phys = nodes_[i].next_phys;
  if (nodes_[r].next_phys != none) nodes_[nodes_[r].next_phys].prev_phys = r;
  nodes_[i].next_phys = r;
  nodes_[i].size = first_size;
  return r;
}

std::vector<tlsf_block> tlsf::blocks() const {
  std::vector<tlsf_block> out;
  for (std::uint32_t i = first_; i != none; i = nodes_[i].next_phys)
    out.push_back({nodes_[i].address, nodes_[i].size, nodes_[i].is_free});
  return out;
}

std::string tlsf::find_inconsistency() const {
  std::uint64_t at = base_, free_sum = 0;
  std::size_t free_blocks = 0, used_blocks = 0;
  bool prev_free = false;
  std::uint32_t prev = none;
  for (std::uint32_t i = first_; i != none; prev = i, i = nodes_[i].next_phys) {
    const node& n = nodes_[i];
    if (n.prev_phys != prev) return str("block ", hex{n.address}, " has a wrong left link");
    if (n.address != at) return str("gap or overlap at ", hex{at}, " (next block at ", hex{n.address}, ")");
    if (n.size == 0 || n.size % granule_ != 0) return str("block ", hex{n.address}, " has size ", n.size);
    if (n.is_free && prev_free) return str("free blocks not merged at ", hex{n.address});
    if (n.is_free) {
      ++free_blocks;
      free_sum += n.size;
      const bucket b = bucket_of(n.size);
      bool listed = false;
      for (std::uint32_t j = heads_[b.fl][b.sl]; j != none && !listed; j = nodes_[j].next_free) listed = j == i;
      if (!listed) return str("free block ", hex{n.address}, " is not in its size class");
    } else {
      ++used_blocks;
      const auto it = allocated_.find(n.address);
      if (it == allocated_.end() || it->second != i) return str("used block ", hex{n.address}, " is not recorded");
    }
    prev_free = n.is_free;
    at += n.size;
  }
  if (at != base_ + size_) return str("blocks end at ", hex{at}, ", not at ", hex{base_ + size_});
  if (free_sum != free_bytes_) return str("free bytes ", free_bytes_, " but free blocks add up to ", free_sum);
  if (used_blocks != allocated_.size()) return "allocation table size does not match the used blocks";
  std::size_t listed = 0;
  for (unsigned fl = 0; fl < fl_count; ++fl) {
    for (unsigned sl = 0; sl < sl_count; ++sl) {
      const bool has = heads_[fl][sl] != none;
      if (has != bool(sl_bitmap_[fl] >> sl & 1)) return str("second-level bitmap wrong at ", fl, ",", sl);
      for (std::uint32_t j = heads_[fl][sl]; j != none; j = nodes_[j].next_free) {
        ++listed;
        const bucket b = bucket_of(nodes_[j].size);
        if (!nodes_[j].is_free || b.fl != fl || b.sl != sl) return str("list ", fl, ",", sl, " holds a wrong block");
      }
    }
    if ((sl_bitmap_[fl] != 0) != bool(fl_bitmap_ >> fl & 1)) return str("first-level bitmap wrong at ", fl);
  }
  if (listed != free_blocks) return "size-class lists hold a block twice or a stale block";
  return "";
}

}  // namespace tg::memory
