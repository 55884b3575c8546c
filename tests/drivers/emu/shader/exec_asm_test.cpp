// exec_asm_test.cpp: hand-written kernels (llvm-mc-19 + ld.lld-19) for what compiled code rarely shows
// on purpose: a VOPD pair whose halves read each other's destination, EXEC-masked lanes left untouched,
// VCC and SCC results, an out-of-bounds store reported as a page fault at its exact address followed by a
// working dispatch on the same queue, and an instruction the interpreter does not implement.
#define DOCTEST_CONFIG_IMPLEMENT
#include "tests/drivers/emu/shader/shader_rig.hpp"

#include <cmath>
#include <cstdlib>

using namespace tg::emu;
using namespace tg::emu::test;

namespace {

const char* const targets[] = {"gfx1100", "gfx1200"};

// A kernel `k` whose only user SGPRs are the kernarg pointer (s[0:1]), `body` then s_endpgm and s_code_end
// padding (the interpreter fetches up to 12 bytes ahead, as LLVM's padding allows).
std::string kernel_asm(const std::string& mcpu, const std::string& body) {
  return ".amdgcn_target \"amdgcn-amd-amdhsa--" + mcpu + "\"\n.amdhsa_code_object_version 5\n.text\n.globl k\n.p2align 8\n"
         ".type k,@function\nk:\n" + body + "\n  s_endpgm\n.fill 64, 4, 0xbf9f0000\n.rodata\n.p2align 6\n"
         ".amdhsa_kernel k\n  .amdhsa_user_sgpr_kernarg_segment_ptr 1\n  .amdhsa_next_free_vgpr 16\n"
         "  .amdhsa_next_free_sgpr 16\n  .amdhsa_wavefront_size32 1\n.end_amdhsa_kernel\n";
}

bool is_gfx12(const std::string& mcpu) { return mcpu.rfind("gfx12", 0) == 0; }

std::string fault_text(shader_rig& r) {
  std::string s;
  for (const auto& f : r.rig.g.faults()) s += describe(f) + "\n";
  return s;
}

}  // namespace

TEST_CASE("a VOPD pair swaps two registers; EXEC-masked lanes stay untouched; VCC and SCC as the ISA says") {
  for (const char* mcpu : targets) {
    CAPTURE(mcpu);
    const bool g12 = is_gfx12(mcpu);
    const std::string wait = g12 ? "s_wait_kmcnt 0" : "s_waitcnt lgkmcnt(0)";
    const std::string add = g12 ? "s_add_co_u32" : "s_add_u32";
    const std::string body =
        "  s_load_b64 s[4:5], s[0:1], 0x0\n  " + wait + "\n"
        "  v_lshlrev_b32 v3, 2, v0\n"
        "  v_mov_b32 v1, v0\n"
        "  v_mov_b32 v2, 100\n"
        "  v_dual_mov_b32 v1, v2 :: v_dual_mov_b32 v2, v1\n"  // X writes v1 from v2, Y v2 from v1: a swap
        "  global_store_b32 v3, v1, s[4:5]\n"
        "  global_store_b32 v3, v2, s[4:5] offset:128\n"
        "  s_mov_b32 s6, exec_lo\n"
        "  s_mov_b32 exec_lo, 0x55555555\n"
        "  v_add_co_u32 v6, vcc_lo, 0xfffffffe, v2\n"          // carries for lanes >= 2
        "  global_store_b32 v3, v6, s[4:5] offset:256\n"
        "  s_mov_b32 exec_lo, s6\n"
        "  v_mov_b32 v7, vcc_lo\n"
        "  global_store_b32 v3, v7, s[4:5] offset:384\n"
        "  s_cmp_lt_u32 s6, 0\n  s_cselect_b32 s7, 11, 22\n"
        "  s_cmp_gt_i32 0, -1\n  s_cselect_b32 s8, 33, 44\n"
        "  " + add + " s9, -1, 2\n  s_cselect_b32 s10, 55, 66\n"
        "  v_mov_b32 v8, s7\n  v_mov_b32 v9, s8\n  v_mov_b32 v10, s10\n  v_mov_b32 v11, s9\n"
        "  global_store_b32 v3, v8, s[4:5] offset:512\n"
        "  global_store_b32 v3, v9, s[4:5] offset:640\n"
        "  global_store_b32 v3, v10, s[4:5] offset:768\n"
        "  global_store_b32 v3, v11, s[4:5] offset:896\n";
    temp_dir dir;
    shader_rig r(gen_of(mcpu));
    r.load(assembly_object(dir, "lanes", mcpu, kernel_asm(mcpu, body)));
    buffer out = r.alloc(4096);
    r.put(out, std::vector<std::uint32_t>(1024, 0xAAAAAAAAu));
    REQUIRE_MESSAGE(r.dispatch("k", {1, 1, 1}, {32, 1, 1}, {out.va.value}), fault_text(r));
    const auto o = r.get<std::uint32_t>(out, 256);
    std::uint32_t vcc = 0;
    for (unsigned l = 2; l < 32; l += 2) vcc |= 1u << l;
    for (unsigned l = 0; l < 32; ++l) {
      CAPTURE(l);
      CHECK(o[l] == 100u);                                       // v1 took v2's old value
      CHECK(o[32 + l] == l);                                     // v2 took v1's old value
      CHECK(o[64 + l] == (l % 2 == 0 ? l - 2 : 0xAAAAAAAAu));    // odd lanes: EXEC off, memory untouched
      CHECK(o[96 + l] == vcc);                                   // carries of active lanes only
      CHECK(o[128 + l] == 22u);                                  // unsigned s6 < 0 is false
      CHECK(o[160 + l] == 33u);                                  // signed 0 > -1
      CHECK(o[192 + l] == 55u);                                  // 0xffffffff + 2 carries out
      CHECK(o[224 + l] == 1u);
    }
  }
}

TEST_CASE("an out-of-bounds store is a page fault at its exact address; the queue then runs again") {
  for (const char* mcpu : targets) {
    CAPTURE(mcpu);
    temp_dir dir;
    shader_rig r(gen_of(mcpu));
    r.load(corpus_object(dir, "add", mcpu));
    buffer a = r.alloc(8192), b = r.alloc(8192);
    buffer out = r.alloc(8192);
    r.rig.pt.unmap(out.va + 4096, 4096);  // the driver unmaps the second page (and flushes the TLB)
    // Lanes 1024..1055 store past `out`: one wave of one workgroup. (With two faulting workgroups,
    // say n = 1100, which one reports its fault first is a race between the host threads that run
    // them, as it is between a card's compute units.)
    const std::uint32_t n = 1056;
    CHECK_FALSE(r.dispatch("add", {(n + 63) / 64, 1, 1}, {64, 1, 1}, {out.va.value, a.va.value, b.va.value, n}));
    const auto faults = r.rig.g.faults();
    REQUIRE(faults.size() == 1);
    CHECK(faults[0].kind == fault_kind::page_fault);
    CHECK(faults[0].write);
    CHECK(faults[0].address == out.va + 4096);  // wave 32, lane 0: the first store past the end
    CHECK(r.rig.g.compute_queue()->halted);

    r.reset_queue();
    r.put(a, std::vector<float>(1024, 1.5f));
    r.put(b, std::vector<float>(1024, 2.0f));
    REQUIRE_MESSAGE(r.dispatch("add", {16, 1, 1}, {64, 1, 1}, {out.va.value, a.va.value, b.va.value, 1024}), fault_text(r));
    const auto o = r.get<float>(out, 1024);
    CHECK(std::all_of(o.begin(), o.end(), [](float v) { return v == 3.5f; }));
    CHECK(r.rig.g.faults().empty());
  }
}

TEST_CASE("an instruction the interpreter does not implement ends the dispatch with its name, PC and kernel") {
  for (const char* mcpu : targets) {
    CAPTURE(mcpu);
    temp_dir dir;
    shader_rig r(gen_of(mcpu));
    r.load(assembly_object(dir, "unimplemented", mcpu, kernel_asm(mcpu, "  v_mov_b32 v1, 0\n  v_cubeid_f32 v0, v1, v2, v3\n")));
    CHECK_FALSE(r.dispatch("k", {1, 1, 1}, {32, 1, 1}, {0}));
    const auto faults = r.rig.g.faults();
    REQUIRE(faults.size() == 1);
    CHECK(faults[0].kind == fault_kind::shader_error);
    const gpu_va entry = r.co->summary("k", r.code.va).entry;
    CHECK(faults[0].address == entry + 4);  // after the 4-byte v_mov_b32
    const std::string& m = faults[0].message;
    CAPTURE(m);
    CHECK(m.find("v_cubeid_f32") != std::string::npos);
    CHECK(m.find("program + 0x4") != std::string::npos);
    CHECK(m.find(mcpu == std::string("gfx1100") ? "gfx1100" : "gfx1200") != std::string::npos);
    CHECK(r.rig.g.compute_queue()->halted);

    r.reset_queue();  // recovers like after a page fault
    r.load(assembly_object(dir, "fine", mcpu, kernel_asm(mcpu, "  v_mov_b32 v1, 0\n")));
    CHECK(r.dispatch("k", {1, 1, 1}, {32, 1, 1}, {0}));
  }
}

TEST_CASE("TG_EMU_PERTURB_TRANSCENDENTALS moves v_exp_f32 results by one ULP on odd lanes, within the bound") {
  for (const char* mcpu : targets) {
    CAPTURE(mcpu);
    const std::string wait = is_gfx12(mcpu) ? "s_wait_kmcnt 0" : "s_waitcnt lgkmcnt(0)";
    const std::string body = "  s_load_b64 s[4:5], s[0:1], 0x0\n  " + wait + "\n  v_lshlrev_b32 v3, 2, v0\n"
                             "  v_cvt_f32_u32 v1, v0\n  v_mul_f32 v1, 0x3e800000, v1\n  v_exp_f32 v2, v1\n"
                             "  global_store_b32 v3, v2, s[4:5]\n";
    temp_dir dir;
    shader_rig r(gen_of(mcpu));
    r.load(assembly_object(dir, "exp", mcpu, kernel_asm(mcpu, body)));
    buffer out = r.alloc(4096);
    ::unsetenv("TG_EMU_PERTURB_TRANSCENDENTALS");
    REQUIRE_MESSAGE(r.dispatch("k", {1, 1, 1}, {32, 1, 1}, {out.va.value}), fault_text(r));
    const auto exact = r.get<float>(out, 32);
    ::setenv("TG_EMU_PERTURB_TRANSCENDENTALS", "1", 1);
    const bool ran = r.dispatch("k", {1, 1, 1}, {32, 1, 1}, {out.va.value});
    ::unsetenv("TG_EMU_PERTURB_TRANSCENDENTALS");
    REQUIRE_MESSAGE(ran, fault_text(r));
    const auto moved = r.get<float>(out, 32);
    for (unsigned l = 0; l < 32; ++l) {
      CAPTURE(l);
      CHECK(exact[l] == float(std::exp2(double(l) * 0.25)));
      CHECK(moved[l] == (l % 2 ? std::nextafter(exact[l], INFINITY) : exact[l]));
    }
  }
}

TEST_CASE("a word no decoded family matches (here an image instruction) is a fault naming its raw dwords") {
  temp_dir dir;
  shader_rig r(gfx_gen::gfx11);
  r.load(assembly_object(dir, "mimg", "gfx1100", kernel_asm("gfx1100", "  .long 0xf0000000, 0x00000000\n")));
  CHECK_FALSE(r.dispatch("k", {1, 1, 1}, {32, 1, 1}, {0}));
  const auto faults = r.rig.g.faults();
  REQUIRE(faults.size() == 1);
  CHECK(faults[0].kind == fault_kind::shader_error);
  CHECK(faults[0].address == r.co->summary("k", r.code.va).entry);
  CHECK(faults[0].message.find("raw dwords 0xF0000000 0x00000000") != std::string::npos);
}

TEST_CASE("a VGPR beyond the descriptor's allocation is a fault, as it would corrupt another wave on a card") {
  temp_dir dir;
  shader_rig r(gfx_gen::gfx11);
  r.load(assembly_object(dir, "vgprs", "gfx1100", kernel_asm("gfx1100", "  v_mov_b32 v20, 0\n")));  // 16 allocated
  CHECK_FALSE(r.dispatch("k", {1, 1, 1}, {32, 1, 1}, {0}));
  const auto faults = r.rig.g.faults();
  REQUIRE(faults.size() == 1);
  CHECK(faults[0].kind == fault_kind::shader_error);
  CHECK(faults[0].message.find("names v20 but COMPUTE_PGM_RSRC1 allocates 16 VGPRs") != std::string::npos);
}

int main(int argc, char** argv) {
  if (!have_llvm_tools()) return 77;
  doctest::Context context(argc, argv);
  return context.run();
}

TEST_CASE("gfx12 v_maximum / v_minimum (and their 3-operand forms) propagate NaN and order -0 below +0") {
  // What LLVM 19 emits for a float max reduction on gfx12 (llvm.maximum): IEEE 754-2019 maximum, unlike
  // v_max_num_f32's maxNum, which would return the number beside a NaN.
  const std::string mcpu = "gfx1200";
  const std::string body =
      "  s_load_b64 s[4:5], s[0:1], 0x0\n  s_wait_kmcnt 0\n"
      "  v_lshlrev_b32 v3, 2, v0\n"
      "  global_load_b32 v1, v3, s[4:5]\n"              // a[l]
      "  global_load_b32 v2, v3, s[4:5] offset:128\n"   // b[l]
      "  s_wait_loadcnt 0\n"
      "  v_maximum_f32 v4, v1, v2\n"
      "  v_minimum_f32 v5, v1, v2\n"
      "  v_maximum3_f32 v6, v1, v2, 1.0\n"
      "  v_max_num_f32 v7, v1, v2\n"
      "  global_store_b32 v3, v4, s[4:5] offset:256\n"
      "  global_store_b32 v3, v5, s[4:5] offset:384\n"
      "  global_store_b32 v3, v6, s[4:5] offset:512\n"
      "  global_store_b32 v3, v7, s[4:5] offset:640\n";
  const float nan = std::nanf(""), inf = INFINITY;
  const float a[] = {1.0f, nan, 2.0f, -0.0f, 0.0f, -inf, 3.5f, nan};
  const float b[] = {2.0f, 1.0f, nan, 0.0f, -0.0f, -5.0f, -7.0f, nan};
  std::vector<float> in(64, 0.0f);
  for (unsigned l = 0; l < 32; ++l) in[l] = a[l % 8], in[32 + l] = b[l % 8];
  temp_dir dir;
  shader_rig r(gen_of(mcpu));
  r.load(assembly_object(dir, "ieee_max", mcpu, kernel_asm(mcpu, body)));
  buffer buf = r.alloc(4096);
  r.put(buf, in);
  REQUIRE_MESSAGE(r.dispatch("k", {1, 1, 1}, {32, 1, 1}, {buf.va.value}), fault_text(r));
  const auto o = r.get<float>(buf, 192);
  auto same = [](float x, float y) { return std::isnan(x) ? std::isnan(y) : x == y && std::signbit(x) == std::signbit(y); };
  for (unsigned l = 0; l < 32; ++l) {
    CAPTURE(l);
    const float x = a[l % 8], y = b[l % 8];
    const bool any_nan = std::isnan(x) || std::isnan(y);
    const float max = any_nan ? nan : x == y ? (std::signbit(x) ? y : x) : std::max(x, y);
    const float min = any_nan ? nan : x == y ? (std::signbit(x) ? x : y) : std::min(x, y);
    CHECK(same(o[64 + l], max));
    CHECK(same(o[96 + l], min));
    CHECK(same(o[128 + l], any_nan ? nan : std::max(max, 1.0f)));
    if (std::isnan(x) != std::isnan(y)) CHECK(o[160 + l] == (std::isnan(x) ? y : x));  // maxNum, for contrast
  }
}

TEST_CASE("the cost counters: waits that cost a memory latency, and the distinct lines touched") {
  for (const char* mcpu : targets) {
    CAPTURE(mcpu);
    const bool g12 = is_gfx12(mcpu);
    const std::string kwait = g12 ? "s_wait_kmcnt 0" : "s_waitcnt lgkmcnt(0)";
    auto load_wait = [&](int n) { return g12 ? "  s_wait_loadcnt " + std::to_string(n) + "\n" : "  s_waitcnt vmcnt(" + std::to_string(n) + ")\n"; };
    // Three loads, then a wait that lets two stay in flight (one latency), a wait for all (free: those two
    // were issued with the first and arrived during its latency), and a wait with none in flight (free).
    // Then a load and a wait for it (a second latency). Lanes read 4 bytes each of
    // one 128-byte line per load; the loads cover lines 0, 1, 2 and 0 again; the store writes line 8.
    const std::string body =
        "  s_load_b64 s[4:5], s[0:1], 0x0\n  " + kwait + "\n"
        "  v_lshlrev_b32 v3, 2, v0\n"
        "  global_load_b32 v4, v3, s[4:5]\n"
        "  global_load_b32 v5, v3, s[4:5] offset:128\n"
        "  global_load_b32 v6, v3, s[4:5] offset:256\n" + load_wait(2) + load_wait(0) + load_wait(0) +
        "  global_load_b32 v7, v3, s[4:5]\n" + load_wait(0) +
        "  v_add_nc_u32 v4, v4, v7\n"
        "  global_store_b32 v3, v4, s[4:5] offset:1024\n";
    temp_dir dir;
    shader_rig r(gen_of(mcpu));
    r.load(assembly_object(dir, "waits", mcpu, kernel_asm(mcpu, body)));
    buffer buf = r.alloc(4096);
    std::vector<std::uint32_t> data(1024);
    for (std::uint32_t i = 0; i < 1024; ++i) data[i] = i;
    r.put(buf, data);
    REQUIRE_MESSAGE(r.dispatch("k", {1, 1, 1}, {32, 1, 1}, {buf.va.value}), fault_text(r));
    const auto k = r.rig.g.last_dispatch();
    CHECK(k.memory_waits == 2);
    CHECK(k.max_wave_memory_waits == 2);
    // Lines 0, 1, 2 and 8 of the buffer, and the kernel arguments' line.
    CHECK(k.global_lines == 5);
    const auto o = r.get<std::uint32_t>(buf, 512);
    for (std::uint32_t l = 0; l < 32; ++l) CHECK(o[256 + l] == 2 * l);
  }
}

TEST_CASE("scalar s_cls_i32 on both generations; gfx12's s_fmamk_f32, s_fmaak_f32 (with their K literal) and s_maximum_f32") {
  for (const char* mcpu : targets) {
    CAPTURE(mcpu);
    const bool g12 = is_gfx12(mcpu);
    const std::string kwait = g12 ? "s_wait_kmcnt 0" : "s_waitcnt lgkmcnt(0)";
    std::string body = "  s_load_b64 s[4:5], s[0:1], 0x0\n  " + kwait + "\n  v_mov_b32 v3, 0\n"
                       "  s_mov_b32 s6, 0x0000f000\n  s_cls_i32 s7, s6\n  v_mov_b32 v1, s7\n"      // 16 leading zeros
                       "  s_mov_b32 s6, 0xfff0f000\n  s_cls_i32 s7, s6\n  v_mov_b32 v2, s7\n"      // 12 leading ones
                       "  global_store_b32 v3, v1, s[4:5]\n  global_store_b32 v3, v2, s[4:5] offset:4\n"
                       "  s_mov_b32 s6, -1\n  s_cls_i32 s7, s6\n  v_mov_b32 v1, s7\n  global_store_b32 v3, v1, s[4:5] offset:8\n";
    if (g12)
      body += "  s_mov_b32 s6, 2.0\n  s_mov_b32 s8, 0.5\n"
              "  s_fmamk_f32 s7, s6, 0x40400000, s8\n  v_mov_b32 v1, s7\n"   // 2 * 3 + 0.5
              "  s_fmaak_f32 s7, s6, s8, 0x40400000\n  v_mov_b32 v2, s7\n"   // 2 * 0.5 + 3
              "  global_store_b32 v3, v1, s[4:5] offset:12\n  global_store_b32 v3, v2, s[4:5] offset:16\n"
              "  s_mov_b32 s6, 0x80000000\n  s_mov_b32 s8, 0\n  s_maximum_f32 s7, s6, s8\n  v_mov_b32 v1, s7\n"  // max(-0, +0) = +0
              "  global_store_b32 v3, v1, s[4:5] offset:20\n";
    temp_dir dir;
    shader_rig r(gen_of(mcpu));
    r.load(assembly_object(dir, "scalar", mcpu, kernel_asm(mcpu, body)));
    buffer out = r.alloc(4096);
    r.put(out, std::vector<std::uint32_t>(8, 0xAAAAAAAAu));
    REQUIRE_MESSAGE(r.dispatch("k", {1, 1, 1}, {32, 1, 1}, {out.va.value}), fault_text(r));
    const auto o = r.get<std::uint32_t>(out, 8);
    CHECK(o[0] == 16u);
    CHECK(o[1] == 12u);
    CHECK(o[2] == 0xFFFFFFFFu);
    if (g12) {
      CHECK(o[3] == 0x40D00000u);  // 6.5
      CHECK(o[4] == 0x40800000u);  // 4.0
      CHECK(o[5] == 0u);
    }
  }
}
