/*===- FakeCuda.c - a stand-in libcuda.so.1 that records what it is asked ---===//
 *
 * Loaded through $EVO_LIBCUDA by the loaders' tests (RuntimeFakeDriverTest.cpp,
 * python/tests/test_fake_driver.py), so that the launch paths of libevo_runtime and
 * python/evo_runtime run in CI without a GPU. Every call that matters appends one line to
 * $EVO_FAKE_CUDA_LOG:
 *
 *   load ctx=C                     cuModuleLoadDataEx in context C
 *   unload ctx=C
 *   attr F A=V                     cuFuncSetAttribute
 *   alloc ctx=C P N / free ctx=C P
 *   memset P N stream=S ctx=C
 *   launch K grid=X,Y,Z block=X,Y,Z smem=N stream=S ctx=C args=P,P,...
 *   SYNC <call>                    any synchronizing call (the loaders must make none)
 *
 * Devices: $EVO_FAKE_CUDA_DEVICES (default 1). Device d's primary context is 0xc000 + d; a stream
 * S belongs to device S >> 20. A kernel K exists when the image contains ".entry K(", and takes as
 * many parameters as ".param" appear up to the next ')'. Kernels whose name contains "heavy" allow
 * 256 threads per block (64 registers), others 1024; the opt-in shared memory limit is 227 KiB.
 * An image containing "FAIL_LOAD", or $EVO_FAKE_CUDA_FAIL_LOAD when set, does not load
 * (CUDA_ERROR_INVALID_PTX, with a JIT log). $EVO_FAKE_CUDA_CC ("9.0") is every device's compute
 * capability (default 1.1); a list ("9.0,8.6") gives device d the d-th entry (the last one for
 * the devices after it). An image that contains "fake-image: TAG" logs "image ctx=C TAG" when it
 * loads (the loaders' tests tell which of a manifest's cubins or PTX was chosen).
 *
 * $EVO_FAKE_CUDA_CHECKSUMS (for evo-eval-worker's launch tests, test/Evaluation/launch-guard.test):
 * "address" or "constant". Then memsets of 16 and 32 bits are logged too
 *   memset16 P N value=V / memset32 P N value=V
 * and a launch of the worker's helper "evo_checksum(src, bytes, out)" makes the next copy from
 * `out` to the host (until `out` is memset) read back a checksum: the address `src` ("address":
 * distinct buffers differ, a buffer keeps its sum) or 0x5eed for every buffer ("constant": the
 * outputs of an op that ignores its inputs). Other copies to the host read nothing (zeros).
 *
 * Tensor maps: cuTensorMapEncodeTiled logs
 *   tensormap dtype=T rank=R addr=A dims=D,.. strides=S,.. box=B,.. estrides=E,.. interleave=I
 *             swizzle=W l2=L oob=O
 * (one line) and writes a descriptor that starts with A, then T and R; with
 * $EVO_FAKE_CUDA_TMAP_FAIL set it fails (CUDA_ERROR_INVALID_VALUE). Copies of exactly 128 bytes
 * to the device are logged (htod128 P first=W, W their first 8 bytes) and remembered, so a later 128-byte copy back from P
 * reads them; a launch of a kernel whose name contains "rewrite_tmap" changes the remembered
 * bytes at its first argument (a kernel that rewrites its tensor map). cuMemcpyHtoDAsync also logs
 *   htodasync P N stream=S ctx=C
 * (before the htod128 line) and the synchronous cuMemcpyHtoD logs "SYNC cuMemcpyHtoD".
 * $EVO_FAKE_CUDA_UPLOADS (for the constant buffers of the loaders' tests): when set, every copy to
 * the device also logs what it copies (after its htodasync or SYNC line):
 *   htodbytes P N hex=H fnv=F      H the first (at most 64) bytes in hex, "..." after them when
 *                                  there are more; F the 64-bit FNV-1a hash of all N bytes
 * and cuStreamCreate hands out distinct handles (0x5c0000, 0x5c0010, ...; otherwise it leaves
 * the handle untouched), logging "streamcreate S flags=F"; cuStreamDestroy logs "streamdestroy S".
 * Built with -DEVO_FAKE_CUDA_NO_TMAP (libevo-fake-cuda-notmap.so) the library has no
 * cuTensorMapEncodeTiled at all (a driver older than CUDA 12).
 *
 * Graph capture: cuStreamIsCapturing reports the stream $EVO_FAKE_CUDA_CAPTURING (a handle in
 * hex, e.g. 0x7000) as capturing, every other as not. While it is set, a capture is in progress
 * in global mode, as torch.cuda.graph makes one: cuMemAlloc, cuMemAllocHost and cuMemHostAlloc
 * fail (CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED) and log "ALLOC-IN-CAPTURE <call>", and a
 * cuMemcpyHtoDAsync from pageable memory on the capturing stream fails the same way (its
 * htodasync line ends with " pageable-in-capture").
 *
 * Pinned memory: cuMemAllocHost_v2 / cuMemHostAlloc log "hostalloc P N" (page-aligned, real
 * memory; with $EVO_FAKE_CUDA_HOSTALLOC_FAIL set they fail, CUDA_ERROR_OUT_OF_MEMORY), cuMemFreeHost
 * logs "hostfree P". A cuMemcpyHtoDAsync whose source lies in such memory
 * logs " pinned" at the end of its htodasync line, and each 128 bytes of it are remembered and
 * logged as htod128 lines (a copy of several tensor maps at once).
 *
 *===----------------------------------------------------------------------===*/

#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int CUresult;
typedef void *CUcontext;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static __thread void *ctxStack[16];
static __thread int ctxDepth; /* ctxStack[ctxDepth - 1] is current; 0: none */
static uintptr_t nextAlloc = 0x7f0000000000;

static void logLine(const char *fmt, ...) {
  const char *path = getenv("EVO_FAKE_CUDA_LOG");
  if (!path || !*path)
    return;
  pthread_mutex_lock(&lock);
  FILE *f = fopen(path, "a");
  if (f) {
    va_list ap;
    va_start(ap, fmt);
    vfprintf(f, fmt, ap);
    va_end(ap);
    fputc('\n', f);
    fclose(f);
  }
  pthread_mutex_unlock(&lock);
}

static void *current(void) { return ctxDepth ? ctxStack[ctxDepth - 1] : NULL; }
static int devices(void) {
  const char *s = getenv("EVO_FAKE_CUDA_DEVICES");
  return s && *s ? atoi(s) : 1;
}

struct Module {
  char *image;
};
struct Function {
  char name[256];
  int params;
};

CUresult cuInit(unsigned flags) { (void)flags; return 0; }
CUresult cuDriverGetVersion(int *v) { *v = 13000; return 0; }
CUresult cuGetErrorName(CUresult rc, const char **s) {
  *s = rc == 218   ? "CUDA_ERROR_INVALID_PTX"
       : rc == 500 ? "CUDA_ERROR_NOT_FOUND"
       : rc == 900 ? "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED"
       : rc == 2   ? "CUDA_ERROR_OUT_OF_MEMORY"
                   : "CUDA_ERROR_FAKE";
  return 0;
}
CUresult cuGetErrorString(CUresult rc, const char **s) { (void)rc; *s = "fake driver"; return 0; }
CUresult cuDeviceGet(int *d, int ordinal) {
  if (ordinal < 0 || ordinal >= devices())
    return 101;
  *d = ordinal;
  return 0;
}
CUresult cuDeviceGetCount(int *n) { *n = devices(); return 0; }
CUresult cuDeviceGetName(char *name, int len, int d) { snprintf(name, len, "Fake GPU %d", d); return 0; }
CUresult cuDeviceGetAttribute(int *v, int attr, int d) {
  (void)d;
  *v = attr == 97 ? 227 * 1024 : 1;
  const char *cc = getenv("EVO_FAKE_CUDA_CC");
  if (cc && *cc && (attr == 75 || attr == 76)) { /* COMPUTE_CAPABILITY_MAJOR / _MINOR */
    for (int i = 0; i < d; ++i) { /* device d: the d-th entry of the list, else the last */
      const char *comma = strchr(cc, ',');
      if (!comma)
        break;
      cc = comma + 1;
    }
    const char *dot = strchr(cc, '.');
    *v = attr == 75 ? atoi(cc) : dot ? atoi(dot + 1) : 0;
  }
  return 0;
}
CUresult cuDeviceGetUuid_v2(unsigned char *u, int d) { memset(u, d, 16); return 0; }
CUresult cuDeviceTotalMem_v2(size_t *n, int d) { (void)d; *n = (size_t)1 << 30; return 0; }
CUresult cuDevicePrimaryCtxRetain(CUcontext *c, int d) { *c = (void *)(uintptr_t)(0xc000 + d); return 0; }
CUresult cuDevicePrimaryCtxRelease_v2(int d) { (void)d; return 0; }
CUresult cuCtxSetCurrent(CUcontext c) {
  if (ctxDepth == 0)
    ctxDepth = 1;
  ctxStack[ctxDepth - 1] = c;
  return 0;
}
CUresult cuCtxGetCurrent(CUcontext *c) { *c = current(); return 0; }
CUresult cuCtxPushCurrent_v2(CUcontext c) {
  if (ctxDepth == 16)
    return 1;
  ctxStack[ctxDepth++] = c;
  return 0;
}
CUresult cuCtxPopCurrent_v2(CUcontext *c) {
  if (ctxDepth == 0)
    return 201;
  if (c)
    *c = ctxStack[ctxDepth - 1];
  --ctxDepth;
  return 0;
}
CUresult cuCtxGetDevice(int *d) {
  if (!current())
    return 201;
  *d = (int)((uintptr_t)current() - 0xc000);
  return 0;
}
CUresult cuCtxSynchronize(void) { logLine("SYNC cuCtxSynchronize"); return 0; }
CUresult cuStreamGetCtx(void *s, CUcontext *c) {
  *c = (void *)(uintptr_t)(0xc000 + ((uintptr_t)s >> 20));
  return 0;
}
/* Whether a capture is in progress ($EVO_FAKE_CUDA_CAPTURING set): allocations are refused. */
static int capturing(void) {
  const char *c = getenv("EVO_FAKE_CUDA_CAPTURING");
  return c && *c;
}
static int capturingStream(void *s) {
  return capturing() &&
         strtoull(getenv("EVO_FAKE_CUDA_CAPTURING"), NULL, 16) == (unsigned long long)(uintptr_t)s;
}
CUresult cuMemAlloc_v2(uintptr_t *p, size_t n) {
  if (capturing()) {
    logLine("ALLOC-IN-CAPTURE cuMemAlloc");
    return 900;
  }
  pthread_mutex_lock(&lock);
  *p = nextAlloc;
  nextAlloc += (n + 4095) / 4096 * 4096 + 4096;
  pthread_mutex_unlock(&lock);
  logLine("alloc ctx=%p %#lx %zu", current(), (unsigned long)*p, n);
  return 0;
}
CUresult cuMemAllocManaged(uintptr_t *p, size_t n, unsigned f) { (void)f; return cuMemAlloc_v2(p, n); }
CUresult cuMemFree_v2(uintptr_t p) { logLine("free ctx=%p %#lx", current(), (unsigned long)p); return 0; }
CUresult cuMemGetInfo_v2(size_t *a, size_t *b) { *a = *b = (size_t)1 << 30; return 0; }
/* evo_checksum emulation ($EVO_FAKE_CUDA_CHECKSUMS): out -> the sum its next read returns. */
static uintptr_t sumOut[64];
static uint64_t sumValue[64];
static int sumCount;
static const char *checksumMode(void) {
  const char *m = getenv("EVO_FAKE_CUDA_CHECKSUMS");
  return m && *m ? m : NULL;
}
static void forgetSum(uintptr_t out) {
  pthread_mutex_lock(&lock);
  for (int i = 0; i < sumCount; ++i)
    if (sumOut[i] == out) {
      sumOut[i] = sumOut[--sumCount];
      sumValue[i] = sumValue[sumCount];
      break;
    }
  pthread_mutex_unlock(&lock);
}
static void rememberSum(uintptr_t out, uint64_t value) {
  forgetSum(out);
  pthread_mutex_lock(&lock);
  if (sumCount < 64) {
    sumOut[sumCount] = out;
    sumValue[sumCount++] = value;
  }
  pthread_mutex_unlock(&lock);
}
static void readSum(void *dst, uintptr_t src, size_t n) {
  if (!checksumMode() || n < 8)
    return;
  pthread_mutex_lock(&lock);
  for (int i = 0; i < sumCount; ++i)
    if (sumOut[i] == src)
      memcpy(dst, &sumValue[i], 8);
  pthread_mutex_unlock(&lock);
}

/* $EVO_FAKE_CUDA_UPLOADS: the bytes of a copy to the device, for the log. */
static int loggingUploads(void) {
  const char *u = getenv("EVO_FAKE_CUDA_UPLOADS");
  return u && *u;
}
static void logUpload(uintptr_t dst, const void *src, size_t n) {
  if (!loggingUploads())
    return;
  const unsigned char *b = src;
  char hex[64 * 2 + 4] = "";
  size_t shown = n < 64 ? n : 64;
  for (size_t i = 0; i < shown; ++i)
    snprintf(hex + 2 * i, 3, "%02x", b[i]);
  if (n > shown)
    strcat(hex, "...");
  uint64_t h = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < n; ++i)
    h = (h ^ b[i]) * 0x100000001b3ull;
  logLine("htodbytes %#lx %zu hex=%s fnv=%016llx", (unsigned long)dst, n, hex, (unsigned long long)h);
}

/* 128-byte device memory (tensor maps): what was copied there last. */
static uintptr_t tmapAt[64];
static unsigned char tmapBytes[64][128];
static int tmapCount;
static unsigned char *tmapSlot(uintptr_t p, int create) {
  for (int i = 0; i < tmapCount; ++i)
    if (tmapAt[i] == p)
      return tmapBytes[i];
  if (!create)
    return NULL;
  int i = tmapCount < 64 ? tmapCount++ : 63;
  tmapAt[i] = p;
  return tmapBytes[i];
}
static void copyIn128(uintptr_t dst, const void *src, size_t n) {
  if (n != 128)
    return;
  uint64_t first;
  memcpy(&first, src, 8);
  pthread_mutex_lock(&lock);
  memcpy(tmapSlot(dst, 1), src, 128);
  pthread_mutex_unlock(&lock);
  logLine("htod128 %#lx first=%#llx", (unsigned long)dst, (unsigned long long)first);
}
static void copyOut128(void *dst, uintptr_t src, size_t n) {
  if (n != 128)
    return;
  pthread_mutex_lock(&lock);
  unsigned char *b = tmapSlot(src, 0);
  if (b)
    memcpy(dst, b, 128);
  pthread_mutex_unlock(&lock);
}
#ifndef EVO_FAKE_CUDA_NO_TMAP
static void listU64(char *out, size_t cap, const uint64_t *v, unsigned n) {
  size_t used = 0;
  out[0] = 0;
  for (unsigned i = 0; i < n && used < cap - 24; ++i)
    used += (size_t)snprintf(out + used, cap - used, "%s%llu", i ? "," : "", (unsigned long long)v[i]);
}
static void listU32(char *out, size_t cap, const uint32_t *v, unsigned n) {
  size_t used = 0;
  out[0] = 0;
  for (unsigned i = 0; i < n && used < cap - 16; ++i)
    used += (size_t)snprintf(out + used, cap - used, "%s%u", i ? "," : "", v[i]);
}
CUresult cuTensorMapEncodeTiled(void *map, int dtype, uint32_t rank, void *addr, const uint64_t *dims,
                                const uint64_t *strides, const uint32_t *box,
                                const uint32_t *estrides, int interleave, int swizzle, int l2,
                                int oob) {
  const char *fail = getenv("EVO_FAKE_CUDA_TMAP_FAIL");
  if (fail && *fail)
    return 1;
  if (rank < 1 || rank > 5)
    return 1;
  char d[128], s[128], b[128], e[128];
  listU64(d, sizeof d, dims, rank);
  listU64(s, sizeof s, strides, rank - 1);
  listU32(b, sizeof b, box, rank);
  listU32(e, sizeof e, estrides, rank);
  logLine("tensormap dtype=%d rank=%u addr=%#lx dims=%s strides=%s box=%s estrides=%s "
          "interleave=%d swizzle=%d l2=%d oob=%d",
          dtype, rank, (unsigned long)(uintptr_t)addr, d, s, b, e, interleave, swizzle, l2, oob);
  uint64_t words[16] = {(uint64_t)(uintptr_t)addr, (uint64_t)dtype, rank};
  memcpy(map, words, sizeof words);
  return 0;
}
#endif

CUresult cuStreamIsCapturing(void *s, int *status) {
  *status = capturingStream(s);
  return 0;
}

/* Pinned host memory: the ranges cuMemAllocHost / cuMemHostAlloc handed out. */
static uintptr_t pinnedAt[256];
static size_t pinnedBytes[256];
static int pinnedCount;
static int isPinned(const void *p, size_t n) {
  uintptr_t a = (uintptr_t)p;
  int found = 0;
  pthread_mutex_lock(&lock);
  for (int i = 0; i < pinnedCount && !found; ++i)
    found = a >= pinnedAt[i] && a + n <= pinnedAt[i] + pinnedBytes[i];
  pthread_mutex_unlock(&lock);
  return found;
}
static CUresult hostAlloc(void **p, size_t n, const char *call) {
  if (capturing()) {
    logLine("ALLOC-IN-CAPTURE %s", call);
    return 900;
  }
  const char *fail = getenv("EVO_FAKE_CUDA_HOSTALLOC_FAIL");
  if ((fail && *fail) || posix_memalign(p, 4096, n ? n : 1) != 0)
    return 2; /* CUDA_ERROR_OUT_OF_MEMORY */
  pthread_mutex_lock(&lock);
  if (pinnedCount < 256) {
    pinnedAt[pinnedCount] = (uintptr_t)*p;
    pinnedBytes[pinnedCount++] = n;
  }
  pthread_mutex_unlock(&lock);
  logLine("hostalloc %#lx %zu", (unsigned long)(uintptr_t)*p, n);
  return 0;
}
CUresult cuMemAllocHost_v2(void **p, size_t n) { return hostAlloc(p, n, "cuMemAllocHost"); }
CUresult cuMemHostAlloc(void **p, size_t n, unsigned flags) {
  (void)flags;
  return hostAlloc(p, n, "cuMemHostAlloc");
}
CUresult cuMemFreeHost(void *p) {
  pthread_mutex_lock(&lock);
  for (int i = 0; i < pinnedCount; ++i)
    if (pinnedAt[i] == (uintptr_t)p) {
      pinnedAt[i] = pinnedAt[--pinnedCount];
      pinnedBytes[i] = pinnedBytes[pinnedCount];
      break;
    }
  pthread_mutex_unlock(&lock);
  logLine("hostfree %#lx", (unsigned long)(uintptr_t)p);
  free(p);
  return 0;
}

CUresult cuMemsetD8Async(uintptr_t p, unsigned char v, size_t n, void *s) {
  if (checksumMode())
    forgetSum(p);
  logLine("memset %#lx %zu value=%d stream=%p ctx=%p", (unsigned long)p, n, v, s, current());
  return 0;
}
CUresult cuModuleLoadDataEx(void **m, const void *image, unsigned n, int *opts, void **vals) {
  const char *text = (const char *)image;
  const char *fail = getenv("EVO_FAKE_CUDA_FAIL_LOAD");
  if (strstr(text, "FAIL_LOAD") || (fail && *fail && strstr(text, fail))) {
    for (unsigned i = 0; i < n; ++i)
      if (opts[i] == 5) /* CU_JIT_ERROR_LOG_BUFFER */
        snprintf((char *)vals[i], 64, "ptxas fatal: fake syntax error");
    return 218;
  }
  struct Module *mod = calloc(1, sizeof *mod);
  mod->image = strdup(text);
  *m = mod;
  logLine("load ctx=%p", current());
  const char *tag = strstr(text, "fake-image: ");
  if (tag) {
    tag += strlen("fake-image: ");
    logLine("image ctx=%p %.*s", current(), (int)strcspn(tag, "\n"), tag);
  }
  return 0;
}
CUresult cuModuleLoadData(void **m, const void *image) { return cuModuleLoadDataEx(m, image, 0, NULL, NULL); }
CUresult cuModuleUnload(void *m) {
  logLine("unload ctx=%p", current());
  free(((struct Module *)m)->image);
  free(m);
  return 0;
}
CUresult cuModuleGetFunction(void **f, void *m, const char *name) {
  char entry[300];
  snprintf(entry, sizeof entry, ".entry %s(", name);
  const char *at = strstr(((struct Module *)m)->image, entry);
  if (!at)
    return 500;
  struct Function *fn = calloc(1, sizeof *fn);
  snprintf(fn->name, sizeof fn->name, "%s", name);
  const char *end = strchr(at + strlen(entry), ')');
  for (const char *p = at; (p = strstr(p + 1, ".param")) && (!end || p < end);)
    ++fn->params;
  *f = fn; /* leaked on purpose: handles stay valid for the process, as the driver's do */
  return 0;
}
CUresult cuFuncSetAttribute(void *f, int attr, int v) {
  logLine("attr %s %d=%d", ((struct Function *)f)->name, attr, v);
  return 0;
}
CUresult cuFuncGetAttribute(int *v, int attr, void *f) {
  int heavy = strstr(((struct Function *)f)->name, "heavy") != NULL;
  *v = attr == 0 ? (heavy ? 256 : 1024) : attr == 4 ? 64 : 0;
  return 0;
}
CUresult cuLaunchKernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                        unsigned bz, unsigned smem, void *s, void **params, void **extra) {
  (void)extra;
  struct Function *fn = f;
  char args[4096] = "";
  size_t used = 0;
  for (int i = 0; i < fn->params && used < sizeof args - 32; ++i)
    used += (size_t)snprintf(args + used, sizeof args - used, "%s%#lx", i ? "," : "",
                             (unsigned long)*(uint64_t *)params[i]);
  logLine("launch %s grid=%u,%u,%u block=%u,%u,%u smem=%u stream=%p ctx=%p args=%s", fn->name,
          gx, gy, gz, bx, by, bz, smem, s, current(), args);
  if (strstr(fn->name, "rewrite_tmap") && fn->params > 0) {
    pthread_mutex_lock(&lock);
    unsigned char *b = tmapSlot((uintptr_t) * (uint64_t *)params[0], 0);
    if (b)
      b[100] ^= 0x5a;
    pthread_mutex_unlock(&lock);
  }
  if (checksumMode() && fn->params == 3 && strcmp(fn->name, "evo_checksum") == 0)
    rememberSum((uintptr_t) * (uint64_t *)params[2],
                strcmp(checksumMode(), "constant") == 0 ? 0x5eed : *(uint64_t *)params[0]);
  return 0;
}
CUresult cuLaunchKernelEx(const void *cfg, void *f, void **params, void **extra) {
  (void)cfg; (void)f; (void)params; (void)extra;
  return 801;
}
CUresult cuStreamSynchronize(void *s) { logLine("SYNC cuStreamSynchronize %p", s); return 0; }
CUresult cuEventSynchronize(void *e) { (void)e; logLine("SYNC cuEventSynchronize"); return 0; }

/* The rest of what evo::cuda::Driver binds: succeed and do nothing. */
#define NOOP(name, ...) CUresult name(__VA_ARGS__) { return 0; }
NOOP(cuMemcpy, uintptr_t a, uintptr_t b, size_t n)
NOOP(cuMemcpyAsync, uintptr_t a, uintptr_t b, size_t n, void *s)
CUresult cuMemcpyHtoD_v2(uintptr_t a, const void *b, size_t n) {
  logLine("SYNC cuMemcpyHtoD");
  logUpload(a, b, n);
  copyIn128(a, b, n);
  return 0;
}
CUresult cuMemcpyDtoH_v2(void *a, uintptr_t b, size_t n) {
  readSum(a, b, n);
  copyOut128(a, b, n);
  return 0;
}
CUresult cuMemcpyDtoHAsync_v2(void *a, uintptr_t b, size_t n, void *s) {
  (void)s;
  readSum(a, b, n);
  copyOut128(a, b, n);
  return 0;
}
CUresult cuMemsetD16Async(uintptr_t p, unsigned short v, size_t n, void *s) {
  (void)s;
  if (checksumMode())
    logLine("memset16 %#lx %zu value=%#x", (unsigned long)p, n, v);
  return 0;
}
CUresult cuMemsetD32Async(uintptr_t p, unsigned v, size_t n, void *s) {
  (void)s;
  if (checksumMode())
    logLine("memset32 %#lx %zu value=%#x", (unsigned long)p, n, v);
  return 0;
}
CUresult cuMemcpyHtoDAsync_v2(uintptr_t a, const void *b, size_t n, void *s) {
  int pinned = isPinned(b, n);
  int refused = !pinned && capturingStream(s);
  logLine("htodasync %#lx %zu stream=%p ctx=%p%s", (unsigned long)a, n, s, current(),
          pinned ? " pinned" : refused ? " pageable-in-capture" : "");
  if (refused)
    return 900;
  logUpload(a, b, n);
  if (pinned && n % 128 == 0)
    for (size_t off = 0; off < n; off += 128)
      copyIn128(a + off, (const unsigned char *)b + off, 128);
  else
    copyIn128(a, b, n);
  return 0;
}
NOOP(cuMemsetD8_v2, uintptr_t a, unsigned char v, size_t n)
NOOP(cuMemHostRegister_v2, void *p, size_t n, unsigned f)
NOOP(cuMemHostUnregister, void *p)
CUresult cuStreamCreate(void **s, unsigned flags) {
  static uintptr_t next = 0x5c0000;
  if (!loggingUploads())
    return 0;
  pthread_mutex_lock(&lock);
  *s = (void *)next;
  next += 0x10;
  pthread_mutex_unlock(&lock);
  logLine("streamcreate %p flags=%u", *s, flags);
  return 0;
}
CUresult cuStreamDestroy_v2(void *s) {
  if (loggingUploads())
    logLine("streamdestroy %p", s);
  return 0;
}
NOOP(cuStreamQuery, void *s)
NOOP(cuStreamWaitEvent, void *s, void *e, unsigned f)
NOOP(cuEventCreate, void **e, unsigned f)
NOOP(cuEventDestroy_v2, void *e)
NOOP(cuEventRecord, void *e, void *s)
NOOP(cuEventElapsedTime, float *ms, void *a, void *b)
