// prefetch_test.cpp: ast::op::prefetch (kernel_builder::prefetch), a hint that carries a
// value: results agree with the AST interpreter (which ignores the hint) under every loop
// shape, also with bytes far past the buffer and with an index that is a vector; the IR
// has one llvm.prefetch per distinct line asked for, inside the loop it leads, and none on a
// target that drops the hints; the hint survives specialization and prints with its buffer.
#include <llvm/Support/raw_ostream.h>

#include "runtime/opt/specialize.hpp"
#include <tg/ast/print.hpp>

#include "tests/runtime/codegen/jit_check.hpp"

namespace {

using tg::test::check;
using tg::test::ir_of;
using tg::test::shapes_for;

int count(const std::string& text, const std::string& what) {
  int n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// Int8 rows of 64 bytes times two activation vectors t, whose group loop asks for the
// bytes `ahead` past what it reads (the matmul's pattern).
tg::ast::kernel matvec(std::int64_t ahead, bool with_prefetch) {
  tg::kernel_builder kb;
  auto n = kb.output_range(12);
  auto t = kb.output_range(2);
  auto g = kb.reduce_range(4);
  auto l = kb.reduce_range(16);
  auto w = kb.cast(tg::dtype::float32, kb.load<std::int8_t>(1, n * 64 + g * 16 + l));
  auto term = w * kb.load<float>(2, t * 64 + g * 16 + l);
  if (with_prefetch) term = kb.prefetch(1, n * 64 + g * 16 + ahead, term);
  kb.store(0, t * 12 + n, kb.sum_lanes(kb.sum(term, g), l));
  return kb.finish();
}

TEST_CASE("a prefetched matvec agrees with the interpreter, also asking for bytes far past the buffer") {
  for (std::int64_t ahead : {std::int64_t(0), std::int64_t(256), std::int64_t(1) << 30}) {
    INFO("prefetch " << ahead << " bytes ahead");
    check(matvec(ahead, true), {{tg::dtype::float32, 24}, {tg::dtype::int8, 768}, {tg::dtype::float32, 128}},
          shapes_for(2, 4));
  }
}

TEST_CASE("a prefetch whose index is a vector (a vector output range) asks for its first element and agrees") {
  tg::kernel_builder kb;
  auto i = kb.output_range(32);
  auto x = kb.load<float>(1, i);
  kb.store(0, i, kb.prefetch(1, i * 4 + 4096, x) * 2.0);
  tg::ast::kernel k = kb.finish();
  check(k, {{tg::dtype::float32, 32}, {tg::dtype::float32, 32}}, shapes_for(1, 8));
  std::string ir = ir_of(k, {{8}, true});
  CHECK(count(ir, "call void @llvm.prefetch") == 1);
  CHECK(count(ir, "extractelement <8 x i64>") >= 1);
}

TEST_CASE("the IR asks once per distinct line, inside the group loop, and not at all without the hint") {
  std::string with = ir_of(matvec(2048, true), {}), without = ir_of(matvec(2048, false), {});
  CHECK(count(with, "call void @llvm.prefetch.p0(ptr") == 1);
  CHECK(count(with, "i32 0, i32 3, i32 1)") == 1);  // a read, kept in every cache level, of data
  CHECK(count(without, "llvm.prefetch") == 0);
  // Two token lanes ask for the same byte: one prefetch; two row lanes ask for two.
  CHECK(count(ir_of(matvec(2048, true), {{1, 2}, false}), "call void @llvm.prefetch.p0(ptr") == 1);
  CHECK(count(ir_of(matvec(2048, true), {{2, 1}, false}), "call void @llvm.prefetch.p0(ptr") == 2);
  // The prefetch sits in the reduce loop's body (block "r.body"), after its label.
  std::size_t body = with.find("r.body:"), call = with.find("call void @llvm.prefetch");
  REQUIRE(body != std::string::npos);
  CHECK(call > body);
}

TEST_CASE("a target without software prefetch drops the hints and computes the same") {
  tg::codegen::kernel_opts off{};
  off.isa.prefetch = false;
  CHECK(count(ir_of(matvec(2048, true), off), "llvm.prefetch") == 0);
  CHECK(ir_of(matvec(2048, true), off) == ir_of(matvec(2048, false), off));  // the hint leaves nothing behind
  std::vector<tg::codegen::kernel_opts> shapes = shapes_for(2, 4);
  for (auto& o : shapes) o.isa.prefetch = false;
  check(matvec(2048, true), {{tg::dtype::float32, 24}, {tg::dtype::int8, 768}, {tg::dtype::float32, 128}}, shapes);
}

TEST_CASE("specialize keeps the hint and print names its buffer") {
  tg::kernel_builder kb;
  auto i = kb.output_range(kb.variable(0));
  auto x = kb.load<float>(1, i);
  kb.store(0, i, kb.prefetch(3, i * 4 + kb.variable(1), x));
  tg::ast::kernel k = kb.finish();
  CHECK(k.slot_count == 4);  // the prefetched buffer counts as a slot the kernel uses
  const std::int64_t vars[] = {16, 512};
  std::vector<tg::ast::node> s = tg::opt::specialize(k.nodes, vars);
  int prefetches = 0;
  for (const tg::ast::node& n : s)
    if (n.o == tg::ast::op::prefetch) {
      ++prefetches;
      CHECK(n.arg == 3);
      CHECK(n.dt == tg::dtype::float32);
    }
  CHECK(prefetches == 1);
  CHECK(tg::ast::to_string(s).find("prefetch.float32") != std::string::npos);
  CHECK(tg::ast::to_string(s).find(" buf3") != std::string::npos);
}

}  // namespace
