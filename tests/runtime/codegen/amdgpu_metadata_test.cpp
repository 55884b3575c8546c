// amdgpu_metadata_test.cpp: the kernel resources read from a code object's NT_AMDGPU_METADATA note
// (runtime/codegen/amdgpu_metadata.hpp) against llvm-readelf-19 --notes on the same object, for a
// tg kernel compiled in process for gfx1100 and gfx1200; a corrupt image and an unknown kernel
// give nothing. Without llvm-readelf-19 the comparison is skipped with a message and the rest runs.
#include <doctest/doctest.h>

#include <tg/tg.hpp>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>

#include "drivers/amd/code_object.hpp"
#include "runtime/codegen/amdgpu_compiler.hpp"
#include "runtime/codegen/amdgpu_kernel.hpp"
#include "runtime/codegen/amdgpu_metadata.hpp"

namespace {

// A tg kernel (a sum over rows, so it has a loop and some registers) compiled for `processor`.
std::vector<std::byte> compiled_kernel(const std::string& processor) {
  tg::codegen::amdgpu_compiler compiler(processor);
  llvm::LLVMContext context;
  llvm::Module module("k", context);
  compiler.prepare(module);
  constexpr auto x = tg::input<float>("x", tg::dims<64, 300>);
  constexpr auto plan = tg::lower((x * x + 1.0f).sum(tg::axis<1>));
  const tg::plan_view view = plan.view();
  tg::codegen::emit_amdgpu_kernel(module, "k", view.kernel_nodes(0), view.kernels[0].global_ranges, 64);
  return compiler.compile(module, "k");
}

// `key`'s number in llvm-readelf-19's YAML rendering of the notes; -1 when it is not there.
long readelf_number(const std::string& notes, const std::string& key) {
  std::smatch m;
  if (!std::regex_search(notes, m, std::regex("\\" + key + ":\\s+(\\d+)"))) return -1;
  return std::stol(m[1]);
}

std::string readelf_notes(const std::vector<std::byte>& elf) {
  if (std::system("llvm-readelf-19 --version > /dev/null 2>&1") != 0) return {};
  const auto path = std::filesystem::temp_directory_path() / ("tg_metadata_" + std::to_string(std::rand()) + ".so");
  std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(elf.data()), std::streamsize(elf.size()));
  std::string text;
  if (FILE* p = popen(("llvm-readelf-19 --notes '" + path.string() + "'").c_str(), "r")) {
    char buf[4096];
    for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, p)) > 0;) text.append(buf, n);
    pclose(p);
  }
  std::filesystem::remove(path);
  return text;
}

}  // namespace

TEST_CASE("SGPRs, VGPRs, scratch and LDS from the metadata note, as llvm-readelf-19 reads them") {
  for (const char* processor : {"gfx1100", "gfx1200"}) {
    CAPTURE(std::string(processor));
    const std::vector<std::byte> elf = compiled_kernel(processor);
    const auto r = tg::codegen::read_kernel_resources(elf, "k");
    REQUIRE(r.has_value());
    CHECK(r->sgprs > 0);
    CHECK(r->vgprs > 0);
    // The descriptor allocates VGPRs in granules of 8 (wave32): at least what the note counts.
    const tg::amd::code_object co(elf);
    const auto& kd = co.kernel("k").descriptor;
    CHECK(kd.vgpr_count() >= r->vgprs);
    CHECK(kd.vgpr_count() < r->vgprs + 8);
    CHECK(r->lds_bytes == kd.group_segment_fixed_size);
    CHECK(r->scratch_bytes == kd.private_segment_fixed_size);
    const std::string notes = readelf_notes(elf);
    if (notes.empty()) {
      MESSAGE("skipped the comparison with llvm-readelf-19: not installed");
      continue;
    }
    CHECK(long(r->sgprs) == readelf_number(notes, ".sgpr_count"));
    CHECK(long(r->vgprs) == readelf_number(notes, ".vgpr_count"));
    CHECK(long(r->scratch_bytes) == readelf_number(notes, ".private_segment_fixed_size"));
    CHECK(long(r->lds_bytes) == readelf_number(notes, ".group_segment_fixed_size"));
  }
}

TEST_CASE("an unknown kernel, a corrupt image and an empty one give no resources") {
  std::vector<std::byte> elf = compiled_kernel("gfx1100");
  CHECK_FALSE(tg::codegen::read_kernel_resources(elf, "not_there").has_value());
  CHECK_FALSE(tg::codegen::read_kernel_resources(std::span(elf).first(200), "k").has_value());
  CHECK_FALSE(tg::codegen::read_kernel_resources({}, "k").has_value());
  for (std::size_t i = 64; i < elf.size(); i += 7) elf[i] = std::byte(0xA5);  // headers kept, the rest garbage
  CHECK_NOTHROW((void)tg::codegen::read_kernel_resources(elf, "k"));
}

TEST_CASE("occupancy from VGPRs: 1536 per SIMD lane in granules of 24, at most 16 waves") {
  CHECK(tg::codegen::waves_per_simd(1) == 16);
  CHECK(tg::codegen::waves_per_simd(96) == 16);
  CHECK(tg::codegen::waves_per_simd(97) == 12);
  CHECK(tg::codegen::waves_per_simd(128) == 10);
  CHECK(tg::codegen::waves_per_simd(192) == 8);
}
