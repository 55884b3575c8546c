// count_allocations.cpp: the test binary's operator new, counting this thread's heap allocations
// (graph_chain.hpp: tg::test::thread_allocations) so tests can check that a replay makes none.
// In a file of its own so the compiler never sees a new and a delete paired across it.
#include <cstdlib>
#include <new>

#include "tests/runtime/jit/graph_chain.hpp"

void* operator new(std::size_t n) {
  ++tg::test::thread_allocations;
  if (void* p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
