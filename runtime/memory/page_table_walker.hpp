// page_table_walker.hpp: reads a GPU's page tables back from VRAM and lists what they map.
//
// Written from the documented entry layout (Linux amdgpu_vm.h) with its own constants:
// it shares no encoding code with the mapper (page_table, pte_format.hpp), so tests can check one
// against the other. The GPU emulator's MMU uses translate() the way the hardware walker would.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "runtime/memory/address.hpp"
#include "runtime/memory/gfx_gen.hpp"
#include "runtime/memory/vram_access.hpp"

namespace tg::memory {

// One valid leaf entry, decoded.
struct walked_leaf {
  gpu_va va;                    // first byte the entry maps
  std::uint64_t size_bytes = 0; // 4 KiB in a PTB, 2 MiB in a PDB0, 1 GiB in a PDB1, 512 GiB in a PDB2
  gpu_pa pa;                    // what va maps to
  unsigned level = 0;           // where it was found: 0 PDB2 (root), 1 PDB1, 2 PDB0, 3 PTB
  unsigned fragment = 0;        // the entry promises 2^(12 + fragment) aligned bytes map contiguously
  unsigned mtype = 0;           // 0 NC (cached), 3 UC
  bool system = false;          // system memory (bus address) rather than VRAM
  bool snooped = false;
  bool readable = false, writable = false, executable = false;
  std::uint64_t raw = 0;        // the entry as read
};

struct page_table_walk {
  std::vector<walked_leaf> leaves;    // in VA order
  std::vector<std::string> problems;  // entries that break the documented format; empty when sound
  std::size_t table_count = 0;        // tables visited, the root included
};

// Every leaf reachable from the root table at root_pa; index 0 of the root maps va_base.
page_table_walk walk_page_tables(gfx_gen gen, vram_access& vram, gpu_pa root_pa, gpu_va va_base);

// The leaf that maps va (reading one entry per level), or nothing: a fault on hardware.
// The byte address is leaf->pa + (va - leaf->va).
std::optional<walked_leaf> translate(gfx_gen gen, vram_access& vram, gpu_pa root_pa, gpu_va va_base, gpu_va va);

}  // namespace tg::memory
