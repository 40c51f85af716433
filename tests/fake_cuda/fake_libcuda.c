// fake_libcuda.c — a stand-in libcuda.so.1 for tests on machines without a GPU: host memory, no
// kernels run. It lets tests/python/cuda/test_fake_driver.py exercise the runtime and bindings.
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <time.h>
typedef int CUresult;
typedef unsigned long long CUdeviceptr;
static __thread void* current_ctx;
static size_t total = 1ull << 34, used = 0;
struct block { CUdeviceptr p; size_t n; struct block* next; };
static struct block* blocks;
static void track(CUdeviceptr p, size_t n) { struct block* b = malloc(sizeof *b); b->p = p; b->n = n; b->next = blocks; blocks = b; used += n; }
static void untrack(CUdeviceptr p) { for (struct block** b = &blocks; *b; b = &(*b)->next) if ((*b)->p == p) { struct block* d = *b; used -= d->n; *b = d->next; free(d); return; } fprintf(stderr, "FAKE: free of unknown %llx\n", p); abort(); }
int launches = 0;
// The stream calls the tests check (record, wait, query, destroy), one line each; fake_pending
// makes queries answer CUDA_ERROR_NOT_READY (work still running) until it is cleared.
static char trace_buf[1 << 16];
static size_t trace_len = 0;
int fake_pending = 0;
static void trace(const char* fmt, void* a, void* b) { if (trace_len < sizeof trace_buf - 128) trace_len += snprintf(trace_buf + trace_len, sizeof trace_buf - trace_len, fmt, a, b); }
const char* fake_trace(void) { return trace_buf; }
void fake_trace_clear(void) { trace_len = 0; trace_buf[0] = 0; }
// What the last launch passed: the first 8 bytes of each parameter (sizes from FAKE_PARAM_SIZES).
unsigned long long fake_last_args[64];
int fake_last_nargs = 0;
static int param_sizes(int* sizes) {
  const char* env = getenv("FAKE_PARAM_SIZES");
  int n = 0;
  for (const char* p = env; p && *p && n < 64;) { sizes[n++] = atoi(p); while (*p && *p != ',') ++p; if (*p) ++p; }
  return env ? n : -1;
}
CUresult cuGetErrorName(CUresult e, const char** s) { *s = e == 2 ? "CUDA_ERROR_OUT_OF_MEMORY" : e == 1 ? "CUDA_ERROR_INVALID_VALUE" : e == 500 ? "CUDA_ERROR_NOT_FOUND" : e == 700 ? "CUDA_ERROR_ILLEGAL_ADDRESS" : "CUDA_ERROR_OTHER"; return 0; }
CUresult cuGetErrorString(CUresult e, const char** s) { *s = "fake error text"; (void)e; return 0; }
CUresult cuInit(unsigned f) { (void)f; return 0; }
CUresult cuDriverGetVersion(int* v) { *v = 13000; return 0; }
CUresult cuDeviceGetCount(int* c) { *c = 1; return 0; }
CUresult cuDeviceGet(int* d, int i) { *d = i; return i == 0 ? 0 : 101; }
CUresult cuDeviceGetName(char* n, int len, int d) { (void)d; snprintf(n, len, "Fake H200"); return 0; }
CUresult cuDeviceGetAttribute(int* v, int a, int d) { (void)d;
  switch (a) { case 1: *v = 1024; break; case 2: *v = 1024; break; case 3: *v = 1024; break; case 4: *v = 64; break; case 5: *v = 2147483647; break; case 6: case 7: *v = 65535; break;
  case 8: *v = 49152; break; case 10: *v = 32; break; case 13: *v = 1980000; break; case 16: *v = 132; break; case 38: *v = 50331648; break; case 75: *v = 9; break; case 76: *v = 0; break;
  case 81: *v = 233472; break; case 97: *v = 232448; break; case 115: *v = 1; break; case 120: *v = 1; break; default: *v = 1; }
  return 0; }
CUresult cuDeviceTotalMem_v2(size_t* b, int d) { (void)d; *b = total; return 0; }
CUresult cuDeviceGetPCIBusId(char* s, int len, int d) { (void)d; snprintf(s, len, "0000:01:00.0"); return 0; }
CUresult cuDevicePrimaryCtxRetain(void** c, int d) { (void)d; *c = (void*)0x1000; return 0; }
CUresult cuCtxSetCurrent(void* c) { current_ctx = c; return 0; }
CUresult cuCtxGetCurrent(void** c) { *c = current_ctx; return 0; }
CUresult cuCtxGetDevice(int* d) { *d = 0; return 0; }
CUresult cuCtxSynchronize(void) { return current_ctx ? 0 : 201; }
CUresult cuCtxGetStreamPriorityRange(int* l, int* g) { *l = 0; *g = -5; return 0; }
CUresult cuMemGetInfo_v2(size_t* f, size_t* t) { *f = total - used; *t = total; return 0; }
struct stream { unsigned flags; int prio; int capturing; int nodes; };
CUresult cuStreamCreateWithPriority(void** s, unsigned f, int p) { if (!current_ctx) return 201; struct stream* x = calloc(1, sizeof *x); x->flags = f; x->prio = p; *s = x; return 0; }
CUresult cuStreamDestroy_v2(void* s) { trace("destroy %p\n", s, NULL); free(s); return 0; }
CUresult cuStreamSynchronize(void* s) { (void)s; return getenv("FAKE_STICKY") ? 700 : 0; }
CUresult cuStreamQuery(void* s) { trace("query %p\n", s, NULL); return fake_pending ? 600 : 0; }
CUresult cuStreamWaitEvent(void* s, void* e, unsigned f) { (void)f; trace("wait %p %p\n", s, e); return 0; }
CUresult cuStreamGetPriority(void* s, int* p) { *p = s ? ((struct stream*)s)->prio : 0; return 0; }
CUresult cuStreamGetFlags(void* s, unsigned* f) { *f = s ? ((struct stream*)s)->flags : 0; return 0; }
CUresult cuStreamGetCtx(void* s, void** c) { (void)s; *c = (void*)0x1000; return 0; }
CUresult cuStreamBeginCapture_v2(void* s, int m) { (void)m; ((struct stream*)s)->capturing = 1; ((struct stream*)s)->nodes = 0; return 0; }
CUresult cuStreamEndCapture(void* s, void** g) { struct stream* x = s; x->capturing = 0; int* n = malloc(sizeof(int)); *n = x->nodes; *g = n; return 0; }
CUresult cuStreamIsCapturing(void* s, int* st) { *st = s ? ((struct stream*)s)->capturing : 0; return 0; }
struct event { unsigned flags; double t; };
static double now(void) { struct timespec ts; clock_gettime(CLOCK_MONOTONIC, &ts); return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6; }
CUresult cuEventCreate(void** e, unsigned f) { struct event* x = calloc(1, sizeof *x); x->flags = f; *e = x; return 0; }
CUresult cuEventDestroy_v2(void* e) { trace("event_destroy %p\n", e, NULL); free(e); return 0; }
CUresult cuEventRecord(void* e, void* s) { trace("record %p %p\n", e, s); ((struct event*)e)->t = now(); return 0; }
CUresult cuEventSynchronize(void* e) { (void)e; return 0; }
CUresult cuEventQuery(void* e) { (void)e; return fake_pending ? 600 : 0; }
CUresult cuEventElapsedTime_v2(float* ms, void* a, void* b) { if ((((struct event*)a)->flags | ((struct event*)b)->flags) & 2) return 400; *ms = ((struct event*)b)->t - ((struct event*)a)->t; return 0; }
static CUresult alloc(CUdeviceptr* p, size_t n) { if (n > total - used) return 2; void* m = aligned_alloc(256, (n + 255) / 256 * 256); if (!m) return 2; *p = (CUdeviceptr)m; track(*p, n); return 0; }
CUresult cuMemAlloc_v2(CUdeviceptr* p, size_t n) { return alloc(p, n); }
CUresult cuMemFree_v2(CUdeviceptr p) { untrack(p); free((void*)p); return 0; }
CUresult cuMemAllocAsync(CUdeviceptr* p, size_t n, void* s) { if (s && ((struct stream*)s)->capturing) ((struct stream*)s)->nodes++; return alloc(p, n); }
CUresult cuMemFreeAsync(CUdeviceptr p, void* s) { if (s && ((struct stream*)s)->capturing) ((struct stream*)s)->nodes++; return cuMemFree_v2(p); }
CUresult cuMemHostAlloc(void** p, size_t n, unsigned f) { (void)f; *p = malloc(n); return 0; }
CUresult cuMemFreeHost(void* p) { free(p); return 0; }
CUresult cuMemAllocManaged(CUdeviceptr* p, size_t n, unsigned f) { (void)f; return alloc(p, n); }
CUresult cuMemcpyAsync(CUdeviceptr d, CUdeviceptr s, size_t n, void* st) { (void)st; memcpy((void*)d, (void*)s, n); return 0; }
CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr d, const void* s, size_t n, void* st) { (void)st; memcpy((void*)d, s, n); return 0; }
CUresult cuMemcpyDtoHAsync_v2(void* d, CUdeviceptr s, size_t n, void* st) { (void)st; memcpy(d, (void*)s, n); return 0; }
CUresult cuMemsetD8Async(CUdeviceptr d, unsigned char v, size_t n, void* s) { if (s && ((struct stream*)s)->capturing) { ((struct stream*)s)->nodes++; return 0; } memset((void*)d, v, n); return 0; }
CUresult cuMemsetD16Async(CUdeviceptr d, unsigned short v, size_t n, void* s) { (void)s; for (size_t i = 0; i < n; ++i) ((unsigned short*)d)[i] = v; return 0; }
CUresult cuMemsetD32Async(CUdeviceptr d, unsigned v, size_t n, void* s) { (void)s; for (size_t i = 0; i < n; ++i) ((unsigned*)d)[i] = v; return 0; }
CUresult cuPointerGetAttribute(void* d, int a, CUdeviceptr p) { (void)d; (void)a; (void)p; return 1; }
CUresult cuDeviceGetDefaultMemPool(void** p, int d) { (void)d; *p = (void*)0x2000; return 0; }
CUresult cuMemPoolSetAttribute(void* p, int a, void* v) { (void)p; (void)a; (void)v; return 0; }
CUresult cuMemPoolGetAttribute(void* p, int a, void* v) { (void)p; (void)a; *(unsigned long long*)v = used; return 0; }
CUresult cuMemPoolTrimTo(void* p, size_t n) { (void)p; (void)n; return 0; }
struct module { int dummy; };
struct function { char name[256]; int max_dyn; };
CUresult cuModuleLoadData(void** m, const void* img) { (void)img; *m = calloc(1, sizeof(struct module)); return 0; }
CUresult cuModuleUnload(void* m) { free(m); return 0; }
CUresult cuModuleGetFunction(void** f, void* m, const char* name) { (void)m; if (strstr(name, "missing") || strchr(name, '<')) return 500; struct function* x = calloc(1, sizeof *x); snprintf(x->name, 256, "%s", name); x->max_dyn = 49152; *f = x; return 0; }
CUresult cuFuncGetAttribute(int* v, int a, void* f) { *v = a == 8 ? ((struct function*)f)->max_dyn : a == 4 ? 16 : a == 1 ? 0 : a == 0 ? 1024 : 90; return 0; }
CUresult cuFuncSetAttribute(void* f, int a, int v) { if (a == 8) ((struct function*)f)->max_dyn = v; return 0; }
CUresult cuFuncGetParamInfo(void* f, size_t i, size_t* offset, size_t* size) {
  (void)f; int sizes[64]; int n = param_sizes(sizes);
  if (n < 0) return 801;
  if ((int)i >= n) return 1;
  *size = sizes[i]; *offset = 0; return 0; }
static CUresult do_launch(void* f, unsigned gx, unsigned bx, unsigned smem, void* s, void** params) {
  if (!current_ctx) return 201;
  if (gx == 0 || bx == 0 || smem > (unsigned)((struct function*)f)->max_dyn) return 1;
  int sizes[64]; int n = param_sizes(sizes);
  fake_last_nargs = n < 0 ? 0 : n;
  for (int i = 0; i < fake_last_nargs; ++i) { fake_last_args[i] = 0; memcpy(&fake_last_args[i], params[i], sizes[i] < 8 ? sizes[i] : 8); }
  if (s && ((struct stream*)s)->capturing) ((struct stream*)s)->nodes++;
  if (trace_len < sizeof trace_buf - 320) trace_len += snprintf(trace_buf + trace_len, sizeof trace_buf - trace_len, "launch %s %p\n", ((struct function*)f)->name, s);
  launches++; return 0; }
CUresult cuLaunchKernel(void* f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz, unsigned smem, void* s, void** p, void** e) { (void)gy; (void)gz; (void)by; (void)bz; (void)p; (void)e; return do_launch(f, gx, bx, smem, s, p); }
typedef struct { unsigned gx, gy, gz, bx, by, bz, smem; void* s; void* attrs; unsigned n; } cfg;
CUresult cuLaunchKernelEx(const cfg* c, void* f, void** p, void** e) { (void)e; return do_launch(f, c->gx, c->bx, c->smem, c->s, p); }
CUresult cuLaunchCooperativeKernel(void* f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz, unsigned smem, void* s, void** p) { (void)gy; (void)gz; (void)by; (void)bz; return do_launch(f, gx, bx, smem, s, p); }
CUresult cuOccupancyMaxActiveBlocksPerMultiprocessor(int* n, void* f, int bs, size_t smem) { (void)f; *n = smem > 100000 ? 1 : 2048 / bs; return 0; }
CUresult cuGraphInstantiateWithFlags(void** e, void* g, unsigned long long fl) { (void)fl; *e = g; return 0; }
CUresult cuGraphLaunch(void* e, void* s) { (void)e; (void)s; return 0; }
CUresult cuGraphUpload(void* e, void* s) { (void)e; (void)s; return 0; }
CUresult cuGraphDestroy(void* g) { (void)g; return 0; }
CUresult cuGraphExecDestroy(void* e) { free(e); return 0; }
CUresult cuGraphGetNodes(void* g, void** nodes, size_t* n) { (void)nodes; *n = *(int*)g; return 0; }
CUresult cuGetExportTable(const void** t, const void* id) { (void)id; *t = 0; return 801; }
