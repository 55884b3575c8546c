/* fake_libcuda.cpp: a stand-in for the NVIDIA driver's libcuda.so.1, for the NV backend's tests on a
 * machine without one (tests/drivers/nv/nv_device_test.cpp points TG_LIBCUDA at it). Device memory
 * is host memory; a module is the PTX text it was given; a launch runs nothing and is recorded for
 * the test to read back (fake_cuda_launches). FAKE_CUDA_MODE=no_device makes cuInit report no GPU.
 * Built with -DFAKE_CUDA_PARTIAL it exports cuInit alone, like a driver too old for tg. Signatures
 * as the CUDA Driver API's (cuda.h).
 *
 * For BEAM's worker (tests/drivers/nv/nv_beam_test.cpp), kernels whose PTX names a planted entry
 * misbehave as a real GPU's would: planted_fault faults at the next synchronization with
 * CUDA_ERROR_ILLEGAL_ADDRESS, and the error is sticky as the driver's is (every later call returns
 * it: "any further CUDA work will return the same error", CUDA Driver API, CUresult), so a runner
 * that ran candidates in the user's process would lose the user's context here too;
 * planted_hang never finishes (synchronizations block, queries say not ready); planted_crash
 * kills the calling process with SIGSEGV at its launch. FAKE_CUDA_TIMING=threads gives the
 * launches a GPU time (events read it): 1 us per 256 threads launched, so schedules differ. */
#include <stdint.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

extern "C" {

typedef int CUresult;

CUresult cuInit(unsigned flags) {
  (void)flags;
  const char* mode = getenv("FAKE_CUDA_MODE");
  return mode && strcmp(mode, "no_device") == 0 ? 100 : 0; /* CUDA_ERROR_NO_DEVICE */
}

#ifndef FAKE_CUDA_PARTIAL
struct fake_launch {
  unsigned grid[3], block[3];
  int params;
  uint64_t values[16];
};
static struct fake_launch launches[4096];
static int launch_count = 0;
static char last_ptx[1 << 20];
static int module_loads = 0, host_allocs = 0;

int fake_cuda_launches(const struct fake_launch** out) { *out = launches; return launch_count; }
const char* fake_cuda_last_ptx(void) { return last_ptx; }
int fake_cuda_module_loads(void) { return module_loads; }
int fake_cuda_host_allocs(void) { return host_allocs; }

CUresult cuGetErrorName(CUresult e, const char** s) {
  *s = e == 100 ? "CUDA_ERROR_NO_DEVICE" : e == 700 ? "CUDA_ERROR_ILLEGAL_ADDRESS" : "CUDA_ERROR_FAKE";
  return 0;
}
CUresult cuGetErrorString(CUresult e, const char** s) {
  *s = e == 100 ? "no CUDA-capable device is detected" : e == 700 ? "an illegal memory access was encountered" : "fake";
  return 0;
}

/* The planted misbehaviour (above): each module's kind, the sticky error, work that never ends. */
enum { plain = 0, planted_fault = 1, planted_hang = 2, planted_crash = 3 };
static unsigned char module_kind[1 << 16];
static int sticky_error = 0, fault_pending = 0, hung = 0;
int fake_cuda_sticky_error(void) { return sticky_error; }
#define STICKY() \
  do { \
    if (sticky_error) return sticky_error; \
  } while (0)
static void wait_forever(void) {
  for (;;) pause();
}
/* A synchronization: the planted fault surfaces here and sticks; a hang never returns. */
static CUresult synchronize(void) {
  STICKY();
  if (hung) wait_forever();
  if (fault_pending) sticky_error = 700; /* CUDA_ERROR_ILLEGAL_ADDRESS */
  return sticky_error;
}
/* FAKE_CUDA_TIMING=threads: the GPU's clock, advanced by each launch. */
static double gpu_clock_ms = 0;
static int timing_by_threads(void) {
  const char* t = getenv("FAKE_CUDA_TIMING");
  return t && strcmp(t, "threads") == 0;
}
CUresult cuDeviceGetCount(int* n) { *n = 1; return 0; }
CUresult cuDeviceGet(int* d, int i) { *d = i; return i == 0 ? 0 : 101; }
CUresult cuDeviceGetName(char* name, int len, int d) { (void)d; strncpy(name, "Fake GPU", (size_t)len); return 0; }
CUresult cuDeviceGetAttribute(int* v, int attribute, int d) {
  (void)d;
  *v = attribute == 75 ? 9 : attribute == 76 ? 0 : attribute == 16 ? 132 : 0; /* sm_90, 132 SMs */
  return 0;
}
CUresult cuDeviceTotalMem_v2(size_t* b, int d) { (void)d; *b = (size_t)1 << 30; return 0; }
CUresult cuDevicePrimaryCtxRetain(void** c, int d) { (void)d; *c = (void*)0x1; return 0; }
CUresult cuDevicePrimaryCtxRelease_v2(int d) { (void)d; return 0; }
CUresult cuCtxSetCurrent(void* c) { (void)c; return 0; }
CUresult cuMemGetInfo_v2(size_t* f, size_t* t) { *f = *t = (size_t)1 << 30; return 0; }
CUresult cuMemAlloc_v2(uint64_t* p, size_t n) {  // 256-byte aligned, as the driver's allocations are
  STICKY();
  *p = (uint64_t)(uintptr_t)aligned_alloc(256, (n + 255) / 256 * 256);
  return *p ? 0 : 2;
}
CUresult cuMemFree_v2(uint64_t p) { free((void*)(uintptr_t)p); return 0; }
CUresult cuMemAllocHost_v2(void** p, size_t n) { ++host_allocs; *p = malloc(n); return *p ? 0 : 2; }
CUresult cuMemFreeHost(void* p) { free(p); return 0; }
CUresult cuMemcpyHtoDAsync_v2(uint64_t d, const void* s, size_t n, void* st) { (void)st; STICKY(); memcpy((void*)(uintptr_t)d, s, n); return 0; }
CUresult cuMemcpyDtoHAsync_v2(void* d, uint64_t s, size_t n, void* st) { (void)st; STICKY(); memcpy(d, (void*)(uintptr_t)s, n); return 0; }
CUresult cuMemcpyDtoDAsync_v2(uint64_t d, uint64_t s, size_t n, void* st) { (void)st; memmove((void*)(uintptr_t)d, (void*)(uintptr_t)s, n); return 0; }
/* Refuses, as the real JIT would, PTX without an entry or calling a function it does not define
 * (there is nothing for it to link), writing why into the error log the caller passed. */
CUresult cuModuleLoadDataEx(void** m, const void* image, unsigned n, int* keys, void** values) {
  STICKY();
  strncpy(last_ptx, (const char*)image, sizeof last_ptx - 1);
  ++module_loads;
  *m = (void*)(uintptr_t)module_loads;
  module_kind[module_loads % (1 << 16)] = strstr(last_ptx, ".entry planted_fault") ? planted_fault
                                          : strstr(last_ptx, ".entry planted_hang") ? planted_hang
                                          : strstr(last_ptx, ".entry planted_crash") ? planted_crash
                                                                                     : plain;
  const char* why = !strstr(last_ptx, ".visible .entry") ? "no .entry in the PTX"
                    : strstr(last_ptx, ".extern .func")   ? "the PTX calls an external function"
                                                          : NULL;
  if (!why) return 0;
  for (unsigned i = 0; i + 1 < n; ++i)
    if (keys[i] == 5 && keys[i + 1] == 6) strncpy((char*)values[i], why, (size_t)(uintptr_t)values[i + 1] - 1);
  return 218; /* CUDA_ERROR_INVALID_PTX */
}
CUresult cuModuleGetFunction(void** f, void* m, const char* name) { (void)name; *f = m; return 0; }
CUresult cuFuncGetAttribute(int* value, int attribute, void* f) { (void)f; *value = attribute == 4 ? 40 : 0; return 0; }  // 40 registers
CUresult cuModuleUnload(void* m) { (void)m; return 0; }
CUresult cuLaunchKernel(void* f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                        unsigned shared, void* stream, void** params, void** extra) {
  (void)shared; (void)stream; (void)extra;
  STICKY();
  switch (module_kind[(uintptr_t)f % (1 << 16)]) {
    case planted_fault: fault_pending = 1; break;
    case planted_hang: hung = 1; break;
    case planted_crash: raise(SIGSEGV); break;
    default: break;
  }
  gpu_clock_ms += 1e-3 * gx * gy * gz * bx * by * bz / 256.0;
  if (launch_count == 4096) return 1;
  struct fake_launch* l = &launches[launch_count++];
  l->grid[0] = gx, l->grid[1] = gy, l->grid[2] = gz, l->block[0] = bx, l->block[1] = by, l->block[2] = bz;
  l->params = 0;
  /* tg's kernels take 8-byte parameters only (pointers, i64 variables); the count is not passed,
   * so the test says how many to read through FAKE_CUDA_PARAMS. */
  const char* np = getenv("FAKE_CUDA_PARAMS");
  int count = np ? atoi(np) : 0;
  for (int i = 0; i < count && i < 16; ++i) l->values[l->params++] = *(const uint64_t*)params[i];
  return 0;
}
/* CUDA graphs: a graph is a list of kernel nodes (each recorded like a launch's arguments), an
 * executable graph a copy of it, and cuGraphLaunch records each node as a launch, in order. A node
 * is a handle into the graph it was added to: as the real driver does (CUDA_ERROR_INVALID_VALUE on
 * an H200), cuGraphExecKernelNodeSetParams refuses one whose graph has been destroyed, so a
 * destroyed graph is only marked (and leaked: a test's few graphs). */
struct kernel_node_params {
  void* func;
  unsigned gx, gy, gz, bx, by, bz, shared;
  void** kernel_params;
  void** extra;
};
struct fake_graph {
  struct fake_launch nodes[1024];
  int count;
  int destroyed;
  struct fake_graph* source; /* an executable graph's: the graph it was instantiated from */
};
static int graph_launches = 0;
int fake_cuda_graph_launches(void) { return graph_launches; }
static void record_node(struct fake_launch* l, const struct kernel_node_params* p) {
  l->grid[0] = p->gx, l->grid[1] = p->gy, l->grid[2] = p->gz, l->block[0] = p->bx, l->block[1] = p->by, l->block[2] = p->bz;
  const char* np = getenv("FAKE_CUDA_PARAMS");
  int count = np ? atoi(np) : 0;
  l->params = 0;
  for (int i = 0; i < count && i < 16; ++i) l->values[l->params++] = *(const uint64_t*)p->kernel_params[i];
}
CUresult cuGraphCreate(void** g, unsigned flags) { (void)flags; *g = calloc(1, sizeof(struct fake_graph)); return *g ? 0 : 2; }
CUresult cuGraphDestroy(void* g) { ((struct fake_graph*)g)->destroyed = 1; return 0; }
CUresult cuGraphAddKernelNode(void** node, void* graph, void* const* deps, size_t n, const struct kernel_node_params* p) {
  struct fake_graph* g = (struct fake_graph*)graph;
  if (g->count == 1024 || (n > 0 && (uintptr_t)deps[0] != (uintptr_t)g->count)) return 1; /* nodes chain in order */
  record_node(&g->nodes[g->count++], p);
  *node = (void*)(uintptr_t)g->count; /* 1-based */
  return 0;
}
CUresult cuGraphInstantiateWithFlags(void** exec, void* graph, unsigned long long flags) {
  (void)flags;
  *exec = malloc(sizeof(struct fake_graph));
  memcpy(*exec, graph, sizeof(struct fake_graph));
  ((struct fake_graph*)*exec)->source = (struct fake_graph*)graph;
  return 0;
}
CUresult cuGraphExecKernelNodeSetParams(void* exec, void* node, const struct kernel_node_params* p) {
  struct fake_graph* g = (struct fake_graph*)exec;
  const int i = (int)(uintptr_t)node - 1;
  if (i < 0 || i >= g->count || g->source->destroyed) return 1; /* CUDA_ERROR_INVALID_VALUE */
  record_node(&g->nodes[i], p);
  return 0;
}
CUresult cuGraphLaunch(void* exec, void* stream) {
  (void)stream;
  struct fake_graph* g = (struct fake_graph*)exec;
  for (int i = 0; i < g->count; ++i) {
    if (launch_count == 4096) return 1;
    launches[launch_count++] = g->nodes[i];
  }
  ++graph_launches;
  return 0;
}
CUresult cuGraphExecDestroy(void* exec) { free(exec); return 0; }
CUresult cuStreamCreate(void** s, unsigned flags) { (void)flags; *s = (void*)0x2; return 0; }
CUresult cuStreamDestroy_v2(void* s) { (void)s; return 0; }
CUresult cuStreamQuery(void* s) {  // FAKE_CUDA_MODE=busy: work that never finishes
  (void)s;
  STICKY();
  const char* mode = getenv("FAKE_CUDA_MODE");
  return hung || (mode && strcmp(mode, "busy") == 0) ? 600 : synchronize(); /* CUDA_ERROR_NOT_READY */
}
CUresult cuStreamSynchronize(void* s) { (void)s; return synchronize(); }
/* An event holds the GPU clock when it was recorded. */
CUresult cuEventCreate(void** e, unsigned flags) { (void)flags; *e = calloc(1, sizeof(double)); return *e ? 0 : 2; }
CUresult cuEventDestroy_v2(void* e) { free(e); return 0; }
CUresult cuEventRecord(void* e, void* s) { (void)s; STICKY(); *(double*)e = gpu_clock_ms; return 0; }
CUresult cuEventSynchronize(void* e) { (void)e; return synchronize(); }
CUresult cuEventElapsedTime(float* ms, void* a, void* b) {  // every span 2.5 ms, unless timed by threads
  STICKY();
  *ms = timing_by_threads() ? (float)(*(double*)b - *(double*)a) : 2.5f;
  return 0;
}
#endif

}  // extern "C"
