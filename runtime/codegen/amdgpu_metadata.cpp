// amdgpu_metadata.cpp: the kernel entries of NT_AMDGPU_METADATA, read with LLVM's ELF and
// MessagePack readers (see amdgpu_metadata.hpp).
#include "runtime/codegen/amdgpu_metadata.hpp"

#include <algorithm>

#include <llvm/BinaryFormat/ELF.h>
#include <llvm/BinaryFormat/MsgPackDocument.h>
#include <llvm/Object/ELF.h>

namespace tg::codegen {

namespace {

// A number of the map, whichever integer kind the writer chose; nullopt when absent.
std::optional<std::uint64_t> number(llvm::msgpack::MapDocNode& map, llvm::StringRef key) {
  for (auto& [k, v] : map) {
    if (!k.isString() || k.getString() != key) continue;
    if (v.getKind() == llvm::msgpack::Type::UInt) return v.getUInt();
    if (v.getKind() == llvm::msgpack::Type::Int && v.getInt() >= 0) return std::uint64_t(v.getInt());
  }
  return std::nullopt;
}

// The kernel's map in one note's description, if it is there.
std::optional<amdgpu_kernel_resources> from_note(llvm::StringRef blob, std::string_view kernel) {
  llvm::msgpack::Document doc;
  if (!doc.readFromBlob(blob, false) || !doc.getRoot().isMap()) return std::nullopt;
  for (auto& [key, kernels] : doc.getRoot().getMap()) {
    if (!key.isString() || key.getString() != "amdhsa.kernels" || !kernels.isArray()) continue;
    for (auto& entry : kernels.getArray()) {
      if (!entry.isMap()) continue;
      auto& m = entry.getMap();
      bool named = false;
      for (auto& [k, v] : m) named |= k.isString() && k.getString() == ".name" && v.isString() && std::string_view(v.getString()) == kernel;
      if (!named) continue;
      const auto sgprs = number(m, ".sgpr_count"), vgprs = number(m, ".vgpr_count");
      if (!sgprs || !vgprs) return std::nullopt;
      return amdgpu_kernel_resources{unsigned(*sgprs), unsigned(*vgprs), number(m, ".private_segment_fixed_size").value_or(0),
                                     number(m, ".group_segment_fixed_size").value_or(0)};
    }
  }
  return std::nullopt;
}

}  // namespace

std::optional<amdgpu_kernel_resources> read_kernel_resources(std::span<const std::byte> elf, std::string_view kernel) {
  auto file = llvm::object::ELF64LEFile::create(
      llvm::StringRef(reinterpret_cast<const char*>(elf.data()), elf.size()));
  if (!file) {
    llvm::consumeError(file.takeError());
    return std::nullopt;
  }
  auto sections = file->sections();
  if (!sections) {
    llvm::consumeError(sections.takeError());
    return std::nullopt;
  }
  for (const auto& section : *sections) {
    if (section.sh_type != llvm::ELF::SHT_NOTE) continue;
    llvm::Error err = llvm::Error::success();
    std::optional<amdgpu_kernel_resources> found;
    for (const auto& note : file->notes(section, err)) {
      if (found || note.getName() != "AMDGPU" || note.getType() != llvm::ELF::NT_AMDGPU_METADATA) continue;
      found = from_note(note.getDescAsStringRef(std::max<std::size_t>(4, section.sh_addralign)), kernel);
    }
    if (err) {
      llvm::consumeError(std::move(err));
      return std::nullopt;
    }
    if (found) return found;
  }
  return std::nullopt;
}

}  // namespace tg::codegen
