// amdgpu_linker.hpp: an AMDGPU ELF relocatable object -> a code object (an ET_DYN shared object,
// as AMDGPUUsage "Code Object" describes for amdhsa), linked in process by lld's ELF driver
// (liblldELF from liblld-19-dev; no ld.lld process).
//
// lld reads and writes files only, so the object and the code object pass through a private
// temporary folder, removed afterwards. lld keeps its state in process globals, so one link runs
// at a time (lld::lldMain, lld/Common/Driver.h: "safe for re-entry", not for concurrent calls);
// if lld reports that it cannot run again (it recovered from a crash), later links are refused.
//
//   std::vector<std::byte> co = tg::codegen::link_amdgpu_object(object, "k");  // for tg::amd::code_object
#pragma once
#include <cstddef>
#include <span>
#include <string>
#include <vector>

namespace tg::codegen {

// The linked code object; device_error with lld's message when linking fails.
std::vector<std::byte> link_amdgpu_object(std::span<const std::byte> object, const std::string& kernel);

}  // namespace tg::codegen
