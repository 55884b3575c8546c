// graph_test.cpp: graphs on the CPU device: a replay computes what the same launches compute one
// by one, with new variable values and swapped buffers, allocates nothing, and refuses wrong
// arguments with errors that say what and where.
#include <doctest/doctest.h>


#include "tests/runtime/jit/graph_checks.hpp"

namespace {

using tg::test::chain;
using tg::test::chain_n;

}  // namespace

TEST_CASE("a replayed graph on the CPU computes what its launches compute one by one") {
  tg::device dev("CPU");
  chain c(dev);
  tg::graph g = c.capture();
  CHECK(g.launch_count() == 4);
  CHECK(g.var_count() == 2);
  CHECK(g.buffer_count() == 1);
  for (auto [v, rows] : {std::pair<std::int64_t, std::int64_t>{0, chain_n}, {3, 17}, {-5, 299}, {7, 0}, {1, 1}})
    tg::test::check_replay_equals_direct(c, g, v, rows);
}

TEST_CASE("a buffer swap on the CPU holds for its replay only") {
  tg::device dev("CPU");
  chain c(dev);
  tg::graph g = c.capture();
  const std::vector<float> blank(chain_n, -100.0f);
  g.replay({2, chain_n}, {{c.x_param, c.x1}});
  CHECK(c.read_w() == tg::test::chain_reference(tg::test::chain_input(2), 2, chain_n, blank));
  g.replay({2, chain_n});
  CHECK(c.read_w() == tg::test::chain_reference(tg::test::chain_input(1), 2, chain_n, blank));
}

TEST_CASE("a launch's variable can be a parameter plus a constant") {
  tg::device dev("CPU");
  chain c(dev);
  tg::graph_builder b(dev);
  const tg::graph_var n = b.var("n");
  b.add(c.scale, {c.y, c.x0});
  b.add(c.shift, {c.z, c.y}, {n - 3});
  b.add(c.sum, {c.s, c.z});
  b.add(c.head, {c.w, c.z, c.s}, {n + 10});
  tg::graph g = b.finish();
  g.replay({5});
  CHECK(c.read_w() == tg::test::chain_reference(tg::test::chain_input(1), 2, 15, std::vector<float>(chain_n, -100.0f)));
}

TEST_CASE("replays on the CPU allocate nothing") {
  tg::device dev("CPU");
  chain c(dev);
  tg::graph g = c.capture();
  const std::int64_t vars[] = {4, 100};
  const tg::graph_swap swap[] = {{c.x_param, c.x1}};
  g.replay(vars, swap);  // warm: the thread pool and anything lazily made
  const std::uint64_t before = tg::test::thread_allocations;
  for (int i = 0; i < 100; ++i) g.replay(vars, swap);
  CHECK(tg::test::thread_allocations == before);
  CHECK(c.read_w() == tg::test::chain_reference(tg::test::chain_input(2), 4, 100, std::vector<float>(chain_n, -100.0f)));
}

TEST_CASE("graph misuse is a usage error that says what and where") {
  tg::device dev("CPU");
  chain c(dev);
  tg::graph g = c.capture();
  SUBCASE("replay with the wrong number of variables") {
    CHECK_THROWS_WITH_AS(g.replay({1}), "graph::replay: the graph has 2 variable parameters (v, rows); 1 values given",
                         tg::usage_error);
  }
  SUBCASE("a swapped buffer of another size") {
    tg::buffer small = dev.allocate(16);
    CHECK_THROWS_WITH_AS(g.replay({1, 2}, {{c.x_param, small}}),
                         "graph::replay: buffer parameter 'x' is 1200 bytes; the swap's buffer is 16 (swap buffers of "
                         "the same size)",
                         tg::usage_error);
  }
  SUBCASE("a parameter the graph does not have") {
    CHECK_THROWS_WITH_AS(g.replay({1, 2}, {{tg::graph_buffer{3}, c.x1}}),
                         "graph::replay: swap of buffer parameter 3; the graph has 1", tg::usage_error);
  }
  SUBCASE("a launch with the wrong number of buffers") {
    tg::graph_builder b(dev);
    CHECK_THROWS_WITH_AS(b.add(c.scale, {c.y}), "graph_builder on CPU, launch 0: the kernel uses 2 buffer slots, 1 buffers given",
                         tg::usage_error);
  }
  SUBCASE("a variable parameter of another builder") {
    tg::graph_builder other(dev), b(dev);
    other.var("a");
    const tg::graph_var foreign = other.var("b");
    b.add(c.scale, {c.y, c.x0});
    CHECK_THROWS_WITH_AS(b.add(c.shift, {c.z, c.y}, {foreign}),
                         "graph_builder on CPU, launch 1, variable 0: variable parameter 1 is not one of this builder's 0",
                         tg::usage_error);
  }
  SUBCASE("an empty graph") {
    tg::graph_builder b(dev);
    CHECK_THROWS_WITH_AS(b.finish(), "graph_builder on CPU, launch 0: finish of a graph with no launches (add some first)",
                         tg::usage_error);
    CHECK_THROWS_WITH_AS(tg::graph().replay({}), doctest::Contains("the graph is empty"), tg::usage_error);
  }
}
