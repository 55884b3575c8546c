// kernel_headers_test.cpp: every generated value re-derived from the Linux amdgpu headers.
//
// Reads the headers with its own small #define / enum reader (not the generator's) and compares
// each register offset, segment and field, each PM4 opcode, field shift and VGT event, and each
// SDMA packet field with the tables in drivers/amd/regs/ and runtime/queue/*_gen.hpp.
// Headers come from TG_LINUX_SRC (an extracted kernel tree), else from the tarball named by
// TG_LINUX_TARBALL or /usr/src/linux-source-6.12.tar.xz (Debian package linux-source-6.12),
// extracted on the fly into a temporary folder. With neither, the test exits 77 (skipped).
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <regex>
#include <string>

#include "drivers/amd/regs/gc_11_0_0.hpp"
#include "drivers/amd/regs/gc_12_0_0.hpp"
#include "drivers/amd/regs/mmhub_3_0_0.hpp"
#include "drivers/amd/regs/mmhub_4_1_0.hpp"
#include "drivers/amd/regs/osssys_6_0_0.hpp"
#include "drivers/amd/regs/osssys_7_0_0.hpp"
#include "runtime/queue/pm4.hpp"
#include "runtime/queue/sdma.hpp"

namespace fs = std::filesystem;
using tg::queue::reg_table;

namespace {

fs::path amd_root;  // <kernel tree>/drivers/gpu/drm/amd

const char* const needed[] = {
    "amdgpu/nvd.h", "amdgpu/sdma_v6_0_0_pkt_open.h", "amdgpu/sdma_v6_0.c", "amdgpu/sdma_v7_0.c",
    "include/navi10_ip_offset.h", "include/navi10_enum.h", "include/soc24_enum.h",
    "include/asic_reg/gc/gc_11_0_0_offset.h", "include/asic_reg/gc/gc_11_0_0_sh_mask.h",
    "include/asic_reg/gc/gc_12_0_0_offset.h", "include/asic_reg/gc/gc_12_0_0_sh_mask.h",
    "include/asic_reg/mmhub/mmhub_3_0_0_offset.h", "include/asic_reg/mmhub/mmhub_3_0_0_sh_mask.h",
    "include/asic_reg/mmhub/mmhub_4_1_0_offset.h", "include/asic_reg/mmhub/mmhub_4_1_0_sh_mask.h",
    "include/asic_reg/oss/osssys_6_0_0_offset.h", "include/asic_reg/oss/osssys_6_0_0_sh_mask.h",
    "include/asic_reg/oss/osssys_7_0_0_offset.h", "include/asic_reg/oss/osssys_7_0_0_sh_mask.h",
};

std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'') out += "'\\''";
    else out += c;
  }
  out += '\'';
  return out;
}

// Extracts the needed files from the tarball into dir (a tree root); false when tar fails.
bool extract(const fs::path& tarball, const fs::path& dir) {
  std::string cmd = "tar -xJf " + shell_quote(tarball) + " -C " + shell_quote(dir) + " --strip-components=1 --wildcards";
  for (const char* f : needed) {
    cmd += ' ';
    cmd += shell_quote(std::string("*/drivers/gpu/drm/amd/") + f);
  }
  return std::system(cmd.c_str()) == 0;
}

std::string slurp(const std::string& relative) {
  std::ifstream in(amd_root / relative);
  REQUIRE_MESSAGE(in, "cannot read ", (amd_root / relative).string());
  return {std::istreambuf_iterator<char>(in), {}};
}

// Integer literal as C writes it: 0x1F, 12, 0x0000FFFFL, 0xFFFF0000UL.
std::optional<std::uint64_t> literal(std::string s) {
  while (!s.empty() && (s.back() == 'L' || s.back() == 'U' || s.back() == 'l' || s.back() == 'u')) s.pop_back();
  if (s.empty()) return std::nullopt;
  try {
    std::size_t used = 0;
    std::uint64_t v = std::stoull(s, &used, 0);
    if (used == s.size()) return v;
  } catch (const std::exception&) {
  }
  return std::nullopt;
}

// The #defines of one header: plain numbers, `NAME(x) ((x) << N)` shifts, `(A << N)` constants.
struct header {
  std::map<std::string, std::uint64_t, std::less<>> value;
  std::map<std::string, unsigned, std::less<>> shift;

  explicit header(const std::string& relative) {
    static const std::regex define(R"(^#\s*define\s+(\w+)(\(x\))?\s+(.*?)\s*$)");
    static const std::regex shift_macro(R"(^\(\(x\)\s*<<\s*(\d+)\))");
    static const std::regex const_shift(R"(^\((\w+)\s*<<\s*(\d+)\))");
    std::istringstream in(slurp(relative));
    for (std::string line; std::getline(in, line);) {
      std::smatch m, v;
      if (!std::regex_match(line, m, define)) continue;
      std::string body = m[3];
      if (m[2].matched) {
        if (std::regex_search(body, v, shift_macro)) shift[m[1]] = unsigned(std::stoul(v[1]));
      } else if (auto n = literal(body.substr(0, body.find_first_of(" \t/")))) {
        value[m[1]] = *n;
      } else if (std::regex_search(body, v, const_shift)) {
        if (auto a = literal(v[1])) value[m[1]] = *a << std::stoul(v[2]);
      }
    }
  }

  std::optional<std::uint64_t> get(const std::string& name) const {
    auto it = value.find(name);
    return it == value.end() ? std::nullopt : std::optional(it->second);
  }
};

// NAME = value lines of one `typedef enum X { ... } X;` block.
std::map<std::string, std::uint64_t> read_enum(const std::string& relative, const std::string& name) {
  std::string text = slurp(relative);
  std::size_t begin = text.find("typedef enum " + name + " {");
  std::size_t end = text.find("} " + name + ";", begin);
  REQUIRE(begin != std::string::npos);
  REQUIRE(end != std::string::npos);
  std::map<std::string, std::uint64_t> values;
  static const std::regex entry(R"((\w+)\s*=\s*(0x[0-9a-fA-F]+|\d+))");
  std::string block = text.substr(begin, end - begin);
  for (std::sregex_iterator it(block.begin(), block.end(), entry), last; it != last; ++it)
    values[(*it)[1]] = std::stoull((*it)[2], nullptr, 0);
  return values;
}

// Every register and field of a generated table against <ip>_offset.h / <ip>_sh_mask.h.
void check_table(const reg_table& t, const std::string& dir) {
  header offsets("include/asic_reg/" + dir + "/" + std::string(t.ip) + "_offset.h");
  header masks("include/asic_reg/" + dir + "/" + std::string(t.ip) + "_sh_mask.h");
  for (const tg::queue::reg_info& r : t.regs) {
    std::string name(r.name);
    CAPTURE(name);
    CHECK(offsets.get(name) == r.offset);
    CHECK(offsets.get(name + "_BASE_IDX") == r.base_index);
    for (const tg::queue::reg_field& f : t.fields_of(r)) {
      std::string stem = name.substr(3) + "__" + std::string(f.name);
      CAPTURE(stem);
      CHECK(masks.get(stem + "__SHIFT") == f.shift);
      CHECK(masks.get(stem + "_MASK") == f.mask);
    }
  }
}

void check_bases(std::span<const std::uint32_t> bases, const std::string& ip) {
  header ip_offsets("include/navi10_ip_offset.h");
  for (std::size_t seg = 0; seg < bases.size(); ++seg)
    CHECK(ip_offsets.get(ip + "_BASE__INST0_SEG" + std::to_string(seg)) == bases[seg]);
}

}  // namespace

TEST_CASE("the GC, MMHUB and OSSSYS tables equal the kernel's offset and sh_mask headers") {
  using namespace tg::amd::regs;
  check_table(gc_11_0_0::table, "gc");
  check_table(gc_12_0_0::table, "gc");
  check_table(mmhub_3_0_0::table, "mmhub");
  check_table(mmhub_4_1_0::table, "mmhub");
  check_table(osssys_6_0_0::table, "oss");
  check_table(osssys_7_0_0::table, "oss");
  check_bases(gc_11_0_0::navi10_bases, "GC");
  check_bases(mmhub_4_1_0::navi10_bases, "MMHUB");
  check_bases(osssys_7_0_0::navi10_bases, "OSSSYS");
}

TEST_CASE("the PM4 queue-register tables equal the gc headers") {
  check_table(tg::queue::pm4::gc_11_0_0::table, "gc");
  check_table(tg::queue::pm4::gc_12_0_0::table, "gc");
  check_bases(tg::queue::pm4::gc_bases, "GC");
}

TEST_CASE("PM4 opcodes, field shifts and events equal nvd.h and the enum headers") {
  using namespace tg::queue::pm4;
  header nvd("amdgpu/nvd.h");
  for (const named_value& op : packet3_opcodes) {
    CAPTURE(op.name);
    CHECK(nvd.get(std::string(op.name)) == op.value);
  }
  const std::pair<const char*, unsigned> shifts[] = {
      {"WAIT_REG_MEM_FUNCTION", WAIT_REG_MEM_FUNCTION.shift}, {"WAIT_REG_MEM_MEM_SPACE", WAIT_REG_MEM_MEM_SPACE.shift},
      {"WAIT_REG_MEM_OPERATION", WAIT_REG_MEM_OPERATION.shift}, {"WAIT_REG_MEM_ENGINE", WAIT_REG_MEM_ENGINE.shift},
      {"EVENT_TYPE", EVENT_TYPE.shift}, {"EVENT_INDEX", EVENT_INDEX.shift},
      {"PACKET3_RELEASE_MEM_EVENT_TYPE", PACKET3_RELEASE_MEM_EVENT_TYPE.shift},
      {"PACKET3_RELEASE_MEM_EVENT_INDEX", PACKET3_RELEASE_MEM_EVENT_INDEX.shift},
      {"PACKET3_RELEASE_MEM_CACHE_POLICY", PACKET3_RELEASE_MEM_CACHE_POLICY.shift},
      {"PACKET3_RELEASE_MEM_DATA_SEL", PACKET3_RELEASE_MEM_DATA_SEL.shift},
      {"PACKET3_RELEASE_MEM_INT_SEL", PACKET3_RELEASE_MEM_INT_SEL.shift},
      {"PACKET3_RELEASE_MEM_DST_SEL", PACKET3_RELEASE_MEM_DST_SEL.shift},
      {"PACKET3_ACQUIRE_MEM_GCR_CNTL_GLI_INV", PACKET3_ACQUIRE_MEM_GCR_CNTL_GLI_INV.shift},
      {"PACKET3_ACQUIRE_MEM_GCR_CNTL_GLM_WB", PACKET3_ACQUIRE_MEM_GCR_CNTL_GLM_WB.shift},
      {"PACKET3_ACQUIRE_MEM_GCR_CNTL_GL2_WB", PACKET3_ACQUIRE_MEM_GCR_CNTL_GL2_WB.shift},
      {"PACKET3_ACQUIRE_MEM_GCR_CNTL_SEQ", PACKET3_ACQUIRE_MEM_GCR_CNTL_SEQ.shift},
  };
  for (const auto& s : shifts) {  // no structured bindings: CAPTURE's lambda can't see them in clang 14
    CAPTURE(s.first);
    REQUIRE(nvd.shift.count(s.first) == 1);
    CHECK(nvd.shift.at(s.first) == s.second);
  }
  const std::pair<const char*, std::uint32_t> constants[] = {
      {"INDIRECT_BUFFER_VALID", INDIRECT_BUFFER_VALID},
      {"PACKET3_RELEASE_MEM_GCR_GLM_WB", PACKET3_RELEASE_MEM_GCR_GLM_WB},
      {"PACKET3_RELEASE_MEM_GCR_SEQ", PACKET3_RELEASE_MEM_GCR_SEQ},
      {"PACKET3_SET_SH_REG_START", PACKET3_SET_SH_REG_START}, {"PACKET3_SET_SH_REG_END", PACKET3_SET_SH_REG_END},
      {"PACKET3_SET_UCONFIG_REG_START", PACKET3_SET_UCONFIG_REG_START},
      {"PACKET3_SET_UCONFIG_REG_END", PACKET3_SET_UCONFIG_REG_END},
  };
  for (const auto& c : constants) {
    CAPTURE(c.first);
    CHECK(nvd.get(c.first) == c.second);
  }
  auto gfx11 = read_enum("include/navi10_enum.h", "VGT_EVENT_TYPE");
  auto gfx12 = read_enum("include/soc24_enum.h", "VGT_EVENT_TYPE");
  for (const named_value& e : vgt_events) {
    CAPTURE(e.name);
    CHECK(gfx11.at(std::string(e.name)) == e.value);
    CHECK(gfx12.at(std::string(e.name)) == e.value);
  }
}

TEST_CASE("SDMA opcodes, packet fields and copy limits equal the kernel's") {
  using namespace tg::queue::sdma;
  header pkt("amdgpu/sdma_v6_0_0_pkt_open.h");
  for (const packet_layout& l : packet_layouts) {
    std::string prefix = "SDMA_PKT_" + std::string(l.name) + "_";
    CAPTURE(prefix);
    for (const packet_field& f : l.fields) {
      std::string stem = prefix + std::string(f.word) + "_" + std::string(f.name);
      CAPTURE(stem);
      CHECK(pkt.get(stem + "_offset") == f.dword);
      CHECK(pkt.get(stem + "_shift") == f.shift);
      CHECK(pkt.get(stem + "_mask") == f.mask);
    }
  }
  const std::pair<const char*, std::uint8_t> ops[] = {
      {"SDMA_OP_NOP", SDMA_OP_NOP},       {"SDMA_OP_COPY", SDMA_OP_COPY},
      {"SDMA_OP_WRITE", SDMA_OP_WRITE},   {"SDMA_OP_FENCE", SDMA_OP_FENCE},
      {"SDMA_OP_TRAP", SDMA_OP_TRAP},     {"SDMA_OP_POLL_REGMEM", SDMA_OP_POLL_REGMEM},
      {"SDMA_OP_CONST_FILL", SDMA_OP_CONST_FILL}, {"SDMA_OP_TIMESTAMP", SDMA_OP_TIMESTAMP},
      {"SDMA_SUBOP_TIMESTAMP_GET_GLOBAL", SDMA_SUBOP_TIMESTAMP_GET_GLOBAL},
      {"SDMA_SUBOP_COPY_LINEAR", SDMA_SUBOP_COPY_LINEAR}, {"SDMA_SUBOP_WRITE_LINEAR", SDMA_SUBOP_WRITE_LINEAR},
  };
  for (const auto& op : ops) {
    CAPTURE(op.first);
    CHECK(pkt.get(op.first) == op.second);
  }
  static const std::regex limit(R"(\.(copy|fill)_max_bytes\s*=\s*(0x[0-9a-fA-F]+))");
  for (const char* file : {"amdgpu/sdma_v6_0.c", "amdgpu/sdma_v7_0.c"}) {
    CAPTURE(file);
    std::string text = slurp(file);
    int found = 0;
    for (std::sregex_iterator it(text.begin(), text.end(), limit), last; it != last; ++it, ++found)
      CHECK(std::stoull((*it)[2], nullptr, 0) == ((*it)[1] == "copy" ? copy_max_bytes : fill_max_bytes));
    CHECK(found == 2);
    CHECK(text.find("#include \"sdma_v6_0_0_pkt_open.h\"") != std::string::npos);
  }
}

int main(int argc, char** argv) {
  std::optional<fs::path> temp;
  if (const char* src = std::getenv("TG_LINUX_SRC"); src && *src) {
    amd_root = fs::path(src) / "drivers/gpu/drm/amd";
  } else {
    const char* env = std::getenv("TG_LINUX_TARBALL");
    fs::path tarball = env && *env ? env : "/usr/src/linux-source-6.12.tar.xz";
    if (!fs::is_regular_file(tarball)) {
      std::fprintf(stderr, "skipped: no kernel headers (set TG_LINUX_SRC, or install linux-source-6.12 for %s)\n",
                   tarball.c_str());
      return 77;
    }
    char pattern[] = "/tmp/tg-linux-XXXXXX";
    if (!mkdtemp(pattern)) return std::perror("mkdtemp"), 1;
    temp = pattern;
    if (!extract(tarball, *temp)) {
      std::fprintf(stderr, "error: tar could not extract the amdgpu headers from %s\n", tarball.c_str());
      fs::remove_all(*temp);
      return 1;
    }
    amd_root = *temp / "drivers/gpu/drm/amd";
  }
  if (!fs::is_directory(amd_root)) {
    std::fprintf(stderr, "skipped: %s is not a kernel tree's amd folder\n", amd_root.c_str());
    return 77;
  }
  doctest::Context context(argc, argv);
  int rc = context.run();
  if (temp) fs::remove_all(*temp);
  return rc;
}
