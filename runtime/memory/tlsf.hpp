// tlsf.hpp: a two-level segregated-fit allocator over an address range it does not own.
//
// It hands out address ranges (VRAM offsets, GPU virtual addresses); it never touches the memory,
// so its bookkeeping lives on the host. Allocate and free are O(1): free blocks sit in 64 x 16
// size-class lists found through two bitmaps (first level: power of two; second level: 16 equal
// steps within it), as in Masmano et al., "TLSF: a new dynamic memory allocator for real-time
// systems" (ECRTS 2004), and the reference's VRAM allocator (tinygrad/runtime/support/memory.py:
// TLSFAllocator). Neighbouring free blocks merge on free, so freeing everything leaves one block.
//
// Sizes are rounded up to the granule (4 KiB for VRAM and VA); alignments are powers of two.
// Not thread-safe: the driver serialises calls.
#pragma once
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace tg::memory {

struct tlsf_block {
  std::uint64_t address = 0;
  std::uint64_t size_bytes = 0;
  bool is_free = false;
  bool operator==(const tlsf_block&) const = default;
};

class tlsf {
 public:
  // name is what error messages call this allocator ("vram", "gpu va").
  // base and size_bytes must be multiples of granule_bytes, a power of two.
  tlsf(std::string name, std::uint64_t base, std::uint64_t size_bytes, std::uint64_t granule_bytes);

  // The lowest-effort good fit: a block of size_bytes (rounded up to the granule) whose start is a
  // multiple of align_bytes (0 means the granule). Empty when nothing fits.
  std::optional<std::uint64_t> try_allocate(std::uint64_t size_bytes, std::uint64_t align_bytes);
  // Same, but running out throws device_error naming the request and what is free.
  std::uint64_t allocate(std::uint64_t size_bytes, std::uint64_t align_bytes);
  // address must come from allocate and not be freed yet (usage_error otherwise).
  void free(std::uint64_t address);

  bool is_allocated(std::uint64_t address) const { return allocated_.count(address) != 0; }
  std::uint64_t allocation_size(std::uint64_t address) const;  // usage_error if not allocated

  const std::string& name() const { return name_; }
  std::uint64_t base() const { return base_; }
  std::uint64_t size_bytes() const { return size_; }
  std::uint64_t granule_bytes() const { return granule_; }
  std::uint64_t free_bytes() const { return free_bytes_; }
  std::uint64_t used_bytes() const { return size_ - free_bytes_; }
  std::size_t allocation_count() const { return allocated_.size(); }

  // The largest free block. Walks one size class (only for messages and tests).
  std::uint64_t largest_free_block() const;
  // Every block in address order, O(n): for tests, dumps and state comparisons.
  std::vector<tlsf_block> blocks() const;
  // Checks every invariant, O(n). Returns "" when all hold, else what is broken (tests call this).
  std::string find_inconsistency() const;

 private:
  static constexpr unsigned sl_log2 = 4;
  static constexpr unsigned sl_count = 1u << sl_log2;
  static constexpr unsigned fl_count = 64;
  static constexpr std::uint32_t none = 0xFFFF'FFFFu;

  struct node {
    std::uint64_t address = 0;
    std::uint64_t size = 0;
    std::uint32_t prev_phys = none, next_phys = none;  // neighbours in address order
    std::uint32_t prev_free = none, next_free = none;  // neighbours in the size-class list
    bool is_free = false;
  };
  struct bucket {
    unsigned fl = 0, sl = 0;
  };

  bucket bucket_of(std::uint64_t size) const;
  std::uint64_t round_up_to_class(std::uint64_t size) const;
  std::uint32_t find_good_fit(std::uint64_t size) const;
  std::uint32_t find_aligned_fit(std::uint64_t size, std::uint64_t align, std::uint64_t padded) const;
  bool fits(const node& n, std::uint64_t size, std::uint64_t align) const;
  void insert_free(std::uint32_t i);
  void remove_free(std::uint32_t i);
  std::uint32_t new_node();
  void delete_node(std::uint32_t i);
  std::uint32_t split(std::uint32_t i, std::uint64_t first_size);  // returns the right part
  std::uint64_t checked_request(std::uint64_t size_bytes, std::uint64_t& align_bytes) const;

  std::string name_;
  std::uint64_t base_, size_, granule_;
  std::uint64_t free_bytes_ = 0;
  std::vector<node> nodes_;
  std::vector<std::uint32_t> spare_nodes_;
  std::uint32_t first_ = none;  // the block at base_ never merges away: merges keep the left block
  std::uint64_t fl_bitmap_ = 0;
  std::array<std::uint32_t, fl_count> sl_bitmap_{};
  std::array<std::array<std::uint32_t, sl_count>, fl_count> heads_;
  std::unordered_map<std::uint64_t, std::uint32_t> allocated_;  // address -> node
};

}  // namespace tg::memory
