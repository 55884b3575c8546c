// ast_hash_test.cpp: the tuning cache's key: the AST hash is a fixed function of the kernel (the
// same value in every process and run) and tells apart kernels that differ in any field; the
// opts' text form round-trips and rejects what it does not write.
#include <doctest/doctest.h>

#include <sys/wait.h>
#include <unistd.h>

#include "runtime/tune/ast_hash.hpp"
#include "runtime/tune/opts_text.hpp"
#include "tests/runtime/tune/tune_kernels.hpp"

namespace {

std::uint64_t hash_of(const tg::ast::kernel& k) { return tg::tune::ast_hash(k.nodes, k.global_ranges); }

}  // namespace

TEST_CASE("the AST hash of a kernel is the same when the kernel is built again") {
  CHECK(hash_of(tune_test::matmul(64, 32, 16)) == hash_of(tune_test::matmul(64, 32, 16)));
}

TEST_CASE("the AST hash does not change between runs or processes") {
  // Pinned on a node list written out here (not the builder's, which may change its output): a
  // change of this value invalidates every user's tuning cache, so it must come with a new
  // opts_format_version (ast_hash.hpp).
  using tg::ast::op;
  const tg::ast::node nodes[] = {
      {op::constant, tg::dtype::int64, {-1, -1, -1}, 16, 0},
      {op::range, tg::dtype::int64, {0, -1, -1}, 0, 0},
      {op::load, tg::dtype::float32, {1, -1, -1}, 1, 0},
      {op::constant, tg::dtype::float32, {-1, -1, -1}, 0, 0.5},
      {op::mul, tg::dtype::float32, {2, 3, -1}, 0, 0},
      {op::store, tg::dtype::float32, {1, 4, -1}, 0, 0},
  };
  CHECK(tg::tune::ast_hash(nodes, 1) == 0x7ab6765062566eedull);
  // And a child process (another address space, no shared state) computes the same value.
  int fds[2];
  REQUIRE(pipe(fds) == 0);
  const pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    const std::uint64_t h = hash_of(tune_test::matmul(64, 32, 16));
    _exit(write(fds[1], &h, sizeof h) == sizeof h ? 0 : 1);
  }
  std::uint64_t from_child = 0;
  CHECK(read(fds[0], &from_child, sizeof from_child) == sizeof from_child);
  int status = 0;
  waitpid(pid, &status, 0);
  close(fds[0]);
  close(fds[1]);
  CHECK(from_child == hash_of(tune_test::matmul(64, 32, 16)));
}

TEST_CASE("kernels that differ in a bound, a dtype, a slot or their output loops hash apart") {
  const tg::ast::kernel base = tune_test::matmul(64, 32, 16);
  CHECK(hash_of(tune_test::matmul(64, 32, 32)) != hash_of(base));
  CHECK(hash_of(tune_test::matmul(32, 64, 16)) != hash_of(base));
  tg::ast::kernel other_dtype = base, other_slot = base, fewer_outputs = base;
  for (auto& n : other_dtype.nodes)
    if (n.o == tg::ast::op::load && n.arg == 2) n.dt = tg::dtype::float16;
  for (auto& n : other_slot.nodes)
    if (n.o == tg::ast::op::load && n.arg == 2) n.arg = 3;
  fewer_outputs.global_ranges = 1;
  CHECK(hash_of(other_dtype) != hash_of(base));
  CHECK(hash_of(other_slot) != hash_of(base));
  CHECK(hash_of(fewer_outputs) != hash_of(base));
}

TEST_CASE("kernel opts round-trip through their text form") {
  tg::codegen::kernel_opts opts;
  opts.upcast = {1, 4, 16};
  opts.vector_lanes = false;
  CHECK(tg::tune::to_text(opts) == "upcast=1,4,16 lanes=0");
  CHECK(tg::tune::parse_opts(tg::tune::to_text(opts)) == opts);
  CHECK(tg::tune::parse_opts("upcast= lanes=1") == tg::codegen::kernel_opts{});
  opts.panel = 256;
  CHECK(tg::tune::to_text(opts) == "upcast=1,4,16 lanes=0 panel=256");
  CHECK(tg::tune::parse_opts(tg::tune::to_text(opts)) == opts);
  SUBCASE("a GPU schedule") {
    tg::codegen::kernel_opts gpu{{1, 1}, false};
    gpu.group_lanes = 32;
    gpu.reduce_unroll = 4;
    gpu.nested_lanes = 2;
    CHECK(tg::tune::to_text(gpu) == "upcast=1,1 lanes=0 group=32 unroll=4 nested=2");
    CHECK(tg::tune::parse_opts(tg::tune::to_text(gpu)) == gpu);
    gpu.group_lanes = 1;
    gpu.nested_lanes = 1;
    gpu.upcast = {4, 2};
    CHECK(tg::tune::to_text(gpu) == "upcast=4,2 lanes=0 unroll=4");
    CHECK(tg::tune::parse_opts(tg::tune::to_text(gpu)) == gpu);
  }
  SUBCASE("damaged texts are refused") {
    for (const char* bad : {"", "upcast=4", "upcast=4,,2 lanes=1", "upcast=4, lanes=1", "upcast=0 lanes=1",
                            "upcast=4 lanes=2", "upcast=x lanes=1", "tile=4 lanes=1", "upcast=4 lanes=1 panel=",
                            "upcast=4 lanes=1 panel=0", "upcast=4 lanes=1 panel=64x", "upcast=4 panel=64",
                            "upcast=4 lanes=1 group=0", "upcast=4 lanes=1 unroll=4 group=2", "upcast=4 lanes=1  group=2",
                            "upcast=4 lanes=1 group=2 group=2", "upcast=4 lanes=1 nested=128", "upcast=4 lanes=1 "}) {
      CAPTURE(bad);
      CHECK_FALSE(tg::tune::parse_opts(bad).has_value());
    }
  }
}
