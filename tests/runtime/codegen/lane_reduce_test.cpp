// lane_reduce_test.cpp: sums hinted ast::reduce_as_lanes (kernel_builder::sum_lanes), alone,
// nested (pairs summed inside lanes, as the int8 matmul does), around loops, with values
// from the enclosing lanes used inside, under several loop shapes (scalar-lane tiles, and a
// vector output range, where the hint falls back to a loop), against the AST interpreter;
// and byte quads (the VNNI tiles' dot) named as vpdpbusd, or pmaddubsw + pmaddwd without VNNI.
#include <sstream>

#include "drivers/cpu/cpu_target.hpp"
#include "tests/runtime/codegen/jit_check.hpp"

namespace {

using tg::test::check;
using tg::test::shapes_for;

TEST_CASE("a lane sum around a loop keeps vector accumulators and sums them once") {
  tg::kernel_builder kb;
  auto n = kb.output_range(6);
  auto g = kb.reduce_range(5);
  auto l = kb.reduce_range(8);
  auto at = g * 8 + l;
  kb.store(0, n, kb.sum_lanes(kb.sum(kb.load<float>(1, n * 40 + at) * kb.load<float>(2, at), g), l));
  check(kb.finish(), {{tg::dtype::float32, 6}, {tg::dtype::float32, 240}, {tg::dtype::float32, 40}}, shapes_for(1, 2));
}

TEST_CASE("pairs summed inside lanes (the int8 dot product) agree") {
  tg::kernel_builder kb;
  auto n = kb.output_range(4);
  auto t = kb.output_range(2);
  auto g = kb.reduce_range(3);
  auto l = kb.reduce_range(16);
  auto e = kb.reduce_range(2);
  auto j = l * 2 + e;
  auto a = kb.cast(tg::dtype::int32, kb.load<std::int8_t>(1, n * 96 + g * 32 + j));
  auto b = kb.cast(tg::dtype::int32, kb.load<std::int16_t>(2, t * 96 + g * 32 + j));
  auto dot = kb.cast(tg::dtype::float32, kb.sum_lanes(a * b, e));
  auto acc = kb.sum_lanes(kb.sum(dot * kb.load<float>(3, t * 3 + g), g), l);
  kb.store(0, t * 4 + n, acc);
  check(kb.finish(), {{tg::dtype::float32, 8}, {tg::dtype::int8, 384}, {tg::dtype::int16, 192}, {tg::dtype::float32, 6}},
        shapes_for(2, 2));
}

TEST_CASE("integer lane sums, three levels deep, with enclosing lanes used inside, agree") {
  tg::kernel_builder kb;
  auto n = kb.output_range(3);
  auto l = kb.reduce_range(4);
  auto m = kb.reduce_range(2);
  auto e = kb.reduce_range(2);
  auto j = (l * 2 + m) * 2 + e;
  // l * 3 is made first in l's 4 lanes (the left operand is emitted first), then used inside
  // m's 8 and e's 16 lanes, where the codegen spreads the 4-lane value over them.
  auto weight = kb.cast(tg::dtype::int32, l * 3);
  auto inner = kb.sum_lanes(weight * kb.cast(tg::dtype::int32, kb.load<std::int8_t>(1, n * 16 + j)), e);
  auto mid = kb.sum_lanes(weight + inner, m);
  kb.store(0, n, kb.sum_lanes(weight * mid, l));
  check(kb.finish(), {{tg::dtype::int32, 3}, {tg::dtype::int8, 48}}, shapes_for(1, 3));
}

TEST_CASE("a lane sum with a loop inside and a gated load agrees") {
  tg::kernel_builder kb;
  auto n = kb.output_range(5);
  auto l = kb.reduce_range(8);
  auto k = kb.reduce_range(7);
  auto at = k * 8 + l;
  auto valid = at < kb.index(50);
  auto x = kb.load(1, tg::dtype::float32, n * 56 + at, valid);
  kb.store(0, n, kb.sum_lanes(kb.sum(x * x, k), l));
  check(kb.finish(), {{tg::dtype::float32, 5}, {tg::dtype::float32, 280}}, shapes_for(1, 5));
}

}  // namespace

namespace {

// A VNNI tile's dot (llm/model/matmul_tiles.cpp): rows r in a 32-lane vector, quads e of
// unsigned weight bytes times signed activation bytes, summed over p. With `row_bits`, as Q5's
// decode tiles (matmul_tiles.cpp: fifth_bit_dot): the weights' low nibbles, 16 added where bit e
// of row r's byte (slot 3) is set, read inside the quad lanes: each row's byte repeats over its 4.
// With `rows` and `mask_bits`: that many rows a tile, the weight bytes masked to that many bits
// (the AVX2 tiles' Q4 nibbles: 4; Q5: 5).
tg::ast::kernel byte_quads(bool row_bits = false, std::int64_t rows = 32, int mask_bits = 0) {
  tg::kernel_builder kb;
  auto tile = kb.output_range(2);
  auto t = kb.output_range(2);
  auto r = kb.output_range(rows);
  auto p = kb.reduce_range(8);
  auto e = kb.reduce_range(4);
  auto w = kb.load<std::uint8_t>(1, tile * (32 * rows) + p * (4 * rows) + r * 4 + e);
  if (mask_bits > 0) w = w & ((1 << mask_bits) - 1);
  if (row_bits) {
    auto bits = kb.load<std::uint8_t>(3, tile * 256 + p * 32 + r);
    auto set = kb.binary(tg::ast::op::cmpne, bits & (kb.constant(tg::dtype::uint8, 1) << kb.cast(tg::dtype::uint8, e)),
                         kb.constant(tg::dtype::uint8, 0));
    w = (w & 15) | kb.where(set, kb.constant(tg::dtype::uint8, 16), kb.constant(tg::dtype::uint8, 0));
  }
  auto x = kb.cast(tg::dtype::int32, kb.load<std::int8_t>(2, t * 32 + p * 4 + e));
  kb.store(0, (tile * 2 + t) * rows + r, kb.sum(kb.sum_lanes(kb.cast(tg::dtype::int32, w) * x, e), p));
  return kb.finish();
}

}  // namespace

TEST_CASE("quads of unsigned by signed bytes in a vector of rows agree, and with AVX-512 VNNI are vpdpbusd into the running sum") {
  const std::vector<tg::test::slot> slots = {{tg::dtype::int32, 128}, {tg::dtype::uint8, 2048}, {tg::dtype::int8, 64}};
  const tg::codegen::kernel_opts generic{{1, 1, 32}, true};
  check(byte_quads(), slots, {generic});
  tg::codegen::kernel_opts vnni = generic;
  vnni.isa = {512, true};
  // The IR names the instruction and accumulates in it: a call whose accumulator is the loop's sum.
  const std::string ir = tg::test::ir_of(byte_quads(), vnni);
  CHECK(ir.find("@llvm.x86.avx512.vpdpbusd.512(<16 x i32> %") != std::string::npos);
  CHECK(ir.find("@llvm.x86.avx512.vpdpbusd.512(<16 x i32> zeroinitializer") != std::string::npos);  // before folding
  CHECK(tg::test::ir_of(byte_quads(), generic).find("vpdpbusd") == std::string::npos);
  const tg::cpu::cpu_target& host = tg::cpu::host_cpu_target();
  if (host.vnni && host.vector_bits == 512) check(byte_quads(), slots, {vnni});
  else MESSAGE("this CPU has no AVX-512 VNNI: the vpdpbusd kernel was not run");
}

namespace {

// The CPU's quad decode form (llm/model/linear_kernels.cpp): 8 lanes l of quads e over one
// 32-value group, the lanes summed once after the group loop g.
// With `zero`, a zero point subtracted inside the dot as Q6_K's quads do: a second quad sum
// whose unsigned side is the constant.
// With `small`, the weight bytes masked to 6 bits (Q6_K's values): known below 128, so pmaddubsw
// cannot saturate and the AVX2 form may take them.
tg::ast::kernel group_quads(bool zero = false, bool small = false) {
  tg::kernel_builder kb;
  auto n = kb.output_range(6);
  auto g = kb.reduce_range(4);
  auto l = kb.reduce_range(8);
  auto e = kb.reduce_range(4);
  auto byte = kb.load<std::uint8_t>(1, n * 128 + g * 32 + l * 4 + e);
  auto w = kb.cast(tg::dtype::int32, small ? byte & 63 : byte);
  auto x = kb.cast(tg::dtype::int32, kb.load<std::int8_t>(2, g * 32 + l * 4 + e));
  auto dot = kb.sum_lanes(w * x, e);
  if (zero) dot = dot - kb.sum_lanes(kb.cast(tg::dtype::int32, kb.constant(tg::dtype::uint8, 32)) * x, e);
  kb.store(0, n, kb.sum_lanes(kb.sum(dot, g), l));
  return kb.finish();
}

// group_quads' small-byte dot (and zero point) times a per-group scale before the group sum, as the
// K-quants' decode multiplies each sub-block's dot: a 6-bit scale (slot 3, masked), or with
// `wide_scale` a full int32 (slot 4), which no 16-bit pmaddwd operand can hold.
tg::ast::kernel scaled_quads(bool wide_scale) {
  tg::kernel_builder kb;
  auto n = kb.output_range(6);
  auto g = kb.reduce_range(4);
  auto l = kb.reduce_range(8);
  auto e = kb.reduce_range(4);
  auto w = kb.cast(tg::dtype::int32, kb.load<std::uint8_t>(1, n * 128 + g * 32 + l * 4 + e) & 63);
  auto x = kb.cast(tg::dtype::int32, kb.load<std::int8_t>(2, g * 32 + l * 4 + e));
  auto dot = kb.sum_lanes(w * x, e) - kb.sum_lanes(kb.cast(tg::dtype::int32, kb.constant(tg::dtype::uint8, 32)) * x, e);
  auto scale = wide_scale ? kb.load<std::int32_t>(4, n * 4 + g) : kb.cast(tg::dtype::int32, kb.load<std::uint8_t>(3, n * 4 + g) & 63);
  kb.store(0, n, kb.sum_lanes(kb.sum(dot * scale, g), l));
  return kb.finish();
}

int count_of(const std::string& text, const std::string& what) {
  int n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

}  // namespace

TEST_CASE("8 lanes of byte quads on a 512-bit target are the 256-bit vpdpbusd (AVX-512 VL), and agree") {
  const std::vector<tg::test::slot> slots = {{tg::dtype::int32, 6}, {tg::dtype::uint8, 768}, {tg::dtype::int8, 128}};
  tg::codegen::kernel_opts vnni{};
  vnni.isa = {512, true};
  CHECK(tg::test::ir_of(group_quads(), vnni).find("@llvm.x86.avx512.vpdpbusd.256(") != std::string::npos);
  check(group_quads(), slots, {tg::codegen::kernel_opts{}});
  const tg::cpu::cpu_target& host = tg::cpu::host_cpu_target();
  if (host.vnni && host.vector_bits == 512) check(group_quads(), slots, {vnni});
  else MESSAGE("this CPU has no AVX-512 VNNI: the vpdpbusd kernel was not run");
}

TEST_CASE("a constant zero point times signed byte quads is a vpdpbusd of the constant bytes, and agrees") {
  const std::vector<tg::test::slot> slots = {{tg::dtype::int32, 6}, {tg::dtype::uint8, 768}, {tg::dtype::int8, 128}};
  tg::codegen::kernel_opts vnni{};
  vnni.isa = {512, true};
  const std::string ir = tg::test::ir_of(group_quads(true), vnni);
  CHECK(count_of(ir, "call <8 x i32> @llvm.x86.avx512.vpdpbusd.256(") == 2);
  CHECK(ir.find("<i8 32, i8 32,") != std::string::npos);  // the constant as bytes
  check(group_quads(true), slots, {tg::codegen::kernel_opts{}});
  const tg::cpu::cpu_target& host = tg::cpu::host_cpu_target();
  if (host.vnni && host.vector_bits == 512) check(group_quads(true), slots, {vnni});
  else MESSAGE("this CPU has no AVX-512 VNNI: the vpdpbusd kernel was not run");
}

TEST_CASE("without VNNI, byte quads known below 128 are pmaddubsw + pmaddwd; full bytes, which could saturate, are not; both agree") {
  const std::vector<tg::test::slot> slots = {{tg::dtype::int32, 6}, {tg::dtype::uint8, 768}, {tg::dtype::int8, 128}};
  const tg::cpu::cpu_target& host = tg::cpu::host_cpu_target();
  for (int bits : {256, 512}) {
    tg::codegen::kernel_opts avx{};
    avx.isa = {bits, false};
    // 8 sums take the 256-bit form on either target (as vpdpbusd does).
    CHECK(count_of(tg::test::ir_of(group_quads(false, true), avx), "call <16 x i16> @llvm.x86.avx2.pmadd.ub.sw(") == 1);
    CHECK(count_of(tg::test::ir_of(group_quads(true, true), avx), "call <16 x i16> @llvm.x86.avx2.pmadd.ub.sw(") == 2);  // and the zero point's
    // A full byte times -128 twice is -65280: pmaddubsw would saturate it to -32768.
    CHECK(tg::test::ir_of(group_quads(), avx).find("pmadd") == std::string::npos);
    if (host.vector_bits < bits) {
      MESSAGE("this CPU has no " << bits << "-bit integer vectors: the pmaddubsw kernels were not run at that width");
      continue;
    }
    check(group_quads(false, true), slots, {avx});
    check(group_quads(true, true), slots, {avx});
    check(group_quads(), slots, {avx});  // random bytes reach 255 and -128: the fallback is exact
  }
  // A vector of 32 rows of quads (Q5's decode tiles: nibbles and a fifth bit, below 32) fills the
  // target's width: four 256-bit pmaddubsw, or two 512-bit ones (AVX-512 BW).
  const std::vector<tg::test::slot> tile_slots = {
      {tg::dtype::int32, 128}, {tg::dtype::uint8, 2048}, {tg::dtype::int8, 64}, {tg::dtype::uint8, 512}};
  tg::codegen::kernel_opts rows{{1, 1, 32}, true};
  rows.isa = {256, false};
  CHECK(count_of(tg::test::ir_of(byte_quads(true), rows), "call <16 x i16> @llvm.x86.avx2.pmadd.ub.sw(") == 4);
  if (host.vector_bits >= 256) check(byte_quads(true), tile_slots, {rows});
  rows.isa = {512, false};
  CHECK(count_of(tg::test::ir_of(byte_quads(true), rows), "call <32 x i16> @llvm.x86.avx512.pmaddubs.w.512(") == 2);
  if (host.vector_bits >= 512) check(byte_quads(true), tile_slots, {rows});
}

TEST_CASE("without VNNI, quad sums times a 16-bit scale are one pmaddwd against the scale, not ones and a multiply; a wider scale keeps the multiply; both agree") {
  const std::vector<tg::test::slot> slots = {
      {tg::dtype::int32, 6}, {tg::dtype::uint8, 768}, {tg::dtype::int8, 128}, {tg::dtype::uint8, 24}, {tg::dtype::int32, 24}};
  tg::codegen::kernel_opts avx{};
  avx.isa = {256, false};
  // pmaddwd calls whose second operand is not the ones (unoptimised IR: the replaced calls
  // against ones are still there, unused, until LLVM's passes drop them).
  auto scaled_madds = [](const std::string& ir) {
    int n = 0;
    std::istringstream lines(ir);
    for (std::string line; std::getline(lines, line);)
      n += line.find("call <8 x i32> @llvm.x86.avx2.pmadd.wd(") != std::string::npos && line.find("i16 1,") == std::string::npos;
    return n;
  };
  const std::string ir = tg::test::ir_of(scaled_quads(false), avx);
  CHECK(scaled_madds(ir) == 2);  // the dot's and the zero point's
  CHECK(ir.find("mul <8 x i32>") == std::string::npos);
  const std::string wide = tg::test::ir_of(scaled_quads(true), avx);
  CHECK(scaled_madds(wide) == 0);
  CHECK(wide.find("mul <8 x i32>") != std::string::npos);
  if (tg::cpu::host_cpu_target().vector_bits < 256) {
    MESSAGE("this CPU has no 256-bit integer vectors: the pmaddwd kernels were not run");
    return;
  }
  check(scaled_quads(false), slots, {avx});
  check(scaled_quads(true), slots, {avx});  // random int32 scales: products wrap as the multiply does
}

TEST_CASE("a row's value read inside its quad lanes is one vector load of the rows, each repeated over its lanes") {
  const std::vector<tg::test::slot> slots = {
      {tg::dtype::int32, 128}, {tg::dtype::uint8, 2048}, {tg::dtype::int8, 64}, {tg::dtype::uint8, 512}};
  const tg::codegen::kernel_opts generic{{1, 1, 32}, true};
  const std::string ir = tg::test::ir_of(byte_quads(true), generic);
  CHECK(ir.find("load <32 x i8>") != std::string::npos);  // the 32 rows' bytes at once
  CHECK(count_of(ir, "load i8") == 0);                    // not 128 lanes loaded one by one
  check(byte_quads(true), slots, {generic});
  tg::codegen::kernel_opts vnni = generic;
  vnni.isa = {512, true};
  const tg::cpu::cpu_target& host = tg::cpu::host_cpu_target();
  if (host.vnni && host.vector_bits == 512) check(byte_quads(true), slots, {vnni});
  else MESSAGE("this CPU has no AVX-512 VNNI: the vpdpbusd kernel was not run");
}

TEST_CASE("without VNNI, 8 quad sums of 4-bit bytes add up as pmaddubsw's int16 pairs and widen once; of 5-bit bytes, which could leave int16, they widen each time; both agree") {
  const std::vector<tg::test::slot> slots = {{tg::dtype::int32, 32}, {tg::dtype::uint8, 512}, {tg::dtype::int8, 64}};
  tg::codegen::kernel_opts rows{{1, 1, 8}, true};
  rows.isa = {256, false};
  // 8 pair sums of 15 * x0 + 15 * x1 reach 8 * 2 * 15 * 128 = 30720 at most: int16 holds them.
  const std::string nibbles = tg::test::ir_of(byte_quads(false, 8, 4), rows);
  CHECK(nibbles.find("phi <16 x i16>") != std::string::npos);
  CHECK(nibbles.find("add <16 x i16>") != std::string::npos);
  // 8 of 31 * x0 + 31 * x1 could reach 63488: the pairs are widened in every trip.
  const std::string fives = tg::test::ir_of(byte_quads(false, 8, 5), rows);
  CHECK(fives.find("phi <16 x i16>") == std::string::npos);
  CHECK(count_of(fives, "call <16 x i16> @llvm.x86.avx2.pmadd.ub.sw(") == 1);
  if (tg::cpu::host_cpu_target().vector_bits < 256) {
    MESSAGE("this CPU has no 256-bit integer vectors: the int16 sums were not run");
    return;
  }
  check(byte_quads(false, 8, 4), slots, {rows});
  check(byte_quads(false, 8, 5), slots, {rows});
}
