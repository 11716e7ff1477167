#!/usr/bin/env python3
"""The bench suite on the GPU: evolve each task of bench/*.mlir (LLM-free), verify the evolved
module end to end, and compare with PyTorch eager and torch.compile on the same shapes, all in
one run. Called by scripts/gpu-check (section "bench"); prints a table, writes $OUT/bench.json.

Per task: baseline ms (the naive lowering, re-measured interleaved with the finalists), evolved
ms (evo-verify of the final module, every task together), speedup, eager and torch.compile ms
(triton.testing.do_bench, median, which flushes L2 like evo's timing), the fraction of the
roofline the evolved kernels reach (bytes over the measured copy ceiling, or flops over the
measured peak for contractions), and for read-bound tasks "rd@size": the input bytes over the
rate of a read-only stream of the same bytes (read_ceiling_at).
"""

import json
import os
import subprocess
import sys
import tempfile
import time

import torch
import torch.nn.functional as F

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import bench_common  # noqa: E402  (evolve + verify, PyTorch timing: shared with gpu_kbench.py)
from bench_common import time_torch  # noqa: E402
torch.backends.cuda.matmul.allow_tf32 = False
torch.backends.cudnn.allow_tf32 = False
# cuDNN picks its fastest convolution algorithm for each shape (the bar evo's convs must clear).
torch.backends.cudnn.benchmark = True

def channels_last(*args):
    """NCHW-shaped tensors stored NHWC, as evo's NHWC convolutions read them."""
    return [a.contiguous(memory_format=torch.channels_last) for a in args]


# name -> (input shapes and dtypes, PyTorch function, matmul-like[, a preparation applied to
# the inputs once, outside the timing])
def suite():
    f32, f16, bf16 = torch.float32, torch.float16, torch.bfloat16
    M = N = 16384
    R, C = 16384, 8192
    return {
        "relu": ([((M, N), f32)], torch.relu, False),
        "gelu": ([((M, N), f32)], F.gelu, False),
        "sigmoid": ([((M, N), f32)], torch.sigmoid, False),
        "add_bias": ([((M, N), f32), ((N,), f32)], lambda a, b: a + b, False),
        "softmax": ([((R, C), f32)], lambda a: torch.softmax(a, dim=-1), False),
        "layernorm": ([((R, C), f32), ((C,), f32), ((C,), f32)],
                      lambda a, w, b: F.layer_norm(a, (C,), w, b), False),
        "rmsnorm": ([((R, C), f32), ((C,), f32)],
                    lambda a, w: a * torch.rsqrt(a.pow(2).mean(-1, keepdim=True) + 1e-6) * w, False),
        "row_sum": ([((M, N), f32)], lambda a: a.sum(-1), False),
        "col_sum": ([((M, N), f32)], lambda a: a.sum(0), False),
        "transpose": ([((M, N), f32)], lambda a: a.t().contiguous(), False),
        "matmul_f32": ([((4096, 4096), f32), ((4096, 4096), f32)], torch.matmul, True),
        "matmul_f16": ([((8192, 8192), f16), ((8192, 8192), f16)], torch.matmul, True),
        "bmm_f32": ([((128, 512, 512), f32), ((128, 512, 512), f32)], torch.bmm, True),
        # Tensor-core shapes (wgmma on sm_90a).
        "matmul_bf16": ([((8192, 8192), bf16), ((8192, 8192), bf16)], torch.matmul, True),
        "matmul_f16_4096": ([((4096, 4096), f16), ((4096, 4096), f16)], torch.matmul, True),
        "matmul_f16_llm": ([((4096, 4096), f16), ((4096, 14336), f16)], torch.matmul, True),
        "linear_f16": ([((8192, 8192), f16), ((8192, 8192), f16)], lambda x, w: x @ w.t(), True),
        "bmm_f16": ([((64, 1024, 1024), f16), ((64, 1024, 1024), f16)], torch.bmm, True),
        # A fused epilogue: bias and tanh-GELU in the matmul's kernel (issues 13, 14).
        "matmul_bias_gelu_f16": ([((4096, 4096), f16), ((4096, 4096), f16), ((4096,), f16)],
                                 lambda a, b, bias: F.gelu(a @ b + bias, approximate="tanh"), True),
        # The anchor pads inside conv2d; evo's input is the padded tensor (bench/conv2d.mlir).
        "conv2d": ([((32, 64, 128, 128), f32), ((64, 64, 3, 3), f32)],
                   lambda a, w: F.conv2d(a, w, padding=1), True),
        # The same convolution in f16 on tensor cores: evo's image NHWC and filter FHWC
        # (bench/conv2d_f16.mlir), cuDNN's channels_last (its fastest layout in f16).
        "conv2d_f16": ([((32, 64, 128, 128), f16), ((64, 64, 3, 3), f16)],
                       lambda a, w: F.conv2d(a, w, padding=1), True, channels_last),
        "maxpool2d": ([((32, 64, 256, 256), f32)], lambda a: F.max_pool2d(a, 2), False),
        # GEMV and a long-K skinny contraction (issue 14): read-bound, so "matmul-like" False
        # (the roofline column is the fraction of the copy ceiling; read-only kernels may pass 1).
        "gemv_f32": ([((8192, 8192), f32), ((8192,), f32)], torch.mv, False),
        "gemv_f16": ([((8192, 8192), f16), ((8192,), f16)], torch.mv, False),
        "matmul_k1m": ([((64, 1 << 20), f32), ((1 << 20, 1), f32)], torch.matmul, False),
        # nn.Linear at batch 4 and 8 (x @ W^T, W 8192 x 8192): read-bound on W.
        "gemv_b4_f16": ([((4, 8192), f16), ((8192, 8192), f16)], lambda x, w: x @ w.t(), False),
        "gemv_b8_f16": ([((8, 8192), f16), ((8192, 8192), f16)], lambda x, w: x @ w.t(), False),
        "gemv_b4_f32": ([((4, 8192), f32), ((8192, 8192), f32)], lambda x, w: x @ w.t(), False),
        "gemv_b8_f32": ([((8, 8192), f32), ((8192, 8192), f32)], lambda x, w: x @ w.t(), False),
    }


def torch_times(fn, shapes, prep=None):
    args = [torch.randn(s, device="cuda", dtype=d) for s, d in shapes]
    if prep:
        args = prep(*args)
    times = time_torch(fn, args)
    del args
    torch.cuda.empty_cache()
    return times


def loader_time(ptx_dir, name):
    """The emitted module through python/evo_runtime, timed by the same do_bench as PyTorch's
    (one harness for both sides of the comparison; evo's own time is the worker's)."""
    from triton.testing import do_bench
    sys.path.insert(0, os.path.join(ROOT, "python"))
    from evo_runtime import EvoModule
    mod = EvoModule(os.path.join(ptx_dir, name + ".json"))
    ins = [torch.randn(s, dtype=d, device="cuda") if d.is_floating_point
           else torch.randint(-8, 9, s, dtype=d, device="cuda") for s, d in mod._in_want]
    outs, ws = mod.allocate_outputs(), mod.allocate_workspace()
    ms = do_bench(lambda: mod(*ins, outputs=outs, workspace=ws), warmup=25, rep=200,
                  return_mode="median")
    del ins, outs, ws, mod
    torch.cuda.empty_cache()
    return ms


def evolve(evo, name, args, work):
    return bench_common.evolve(evo, os.path.join(ROOT, "bench", name + ".mlir"), name, work,
                               args.candidates, args.seconds, args.chip)


_READ_KERNEL = r"""
// One pass, no loop: u chunks per thread, all loads issued before any is used.
extern "C" __global__ void evo_read_once(const uint4 *p, unsigned long long n, unsigned *sink, int u) {
  unsigned s = 0;
  {
    unsigned long long base = (unsigned long long)blockIdx.x * blockDim.x * u + threadIdx.x;
    uint4 v[16];
#pragma unroll
    for (int j = 0; j < 16; ++j)
      if (j < u && base + (unsigned long long)j * blockDim.x < n)
        asm volatile("ld.global.nc.L1::no_allocate.v4.u32 {%0,%1,%2,%3}, [%4];"
                     : "=r"(v[j].x), "=r"(v[j].y), "=r"(v[j].z), "=r"(v[j].w)
                     : "l"(p + base + (unsigned long long)j * blockDim.x));
#pragma unroll
    for (int j = 0; j < 16; ++j)
      if (j < u && base + (unsigned long long)j * blockDim.x < n) s ^= v[j].x ^ v[j].y ^ v[j].z ^ v[j].w;
    if (s == 0x9e3779b9u) sink[0] = s;
  }
}

extern "C" __global__ void evo_read(const uint4 *p, unsigned long long n, unsigned *sink, int unroll) {
  unsigned s = 0;
  unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
  unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (unroll == 4)
    for (; i + 3 * stride < n; i += 4 * stride) {
      uint4 v[4];
#pragma unroll
      for (int u = 0; u < 4; ++u)
        asm volatile("ld.global.nc.L1::no_allocate.v4.u32 {%0,%1,%2,%3}, [%4];"
                     : "=r"(v[u].x), "=r"(v[u].y), "=r"(v[u].z), "=r"(v[u].w) : "l"(p + i + u * stride));
#pragma unroll
      for (int u = 0; u < 4; ++u) s ^= v[u].x ^ v[u].y ^ v[u].z ^ v[u].w;
    }
  for (; i < n; i += stride) { uint4 v = p[i]; s ^= v.x ^ v.y ^ v.z ^ v.w; }
  if (s == 0x9e3779b9u) sink[0] = s;
}
"""


def read_ceiling_at(nbytes):
    """The read bandwidth (GB/s) of a stream of exactly `nbytes`, timed like PyTorch's ops here
    (do_bench: L2 flushed, median): the best of a few launch shapes of a read-only kernel. The
    worker's read ceiling streams 1 GiB; a 128 MiB read cannot reach that rate (ramp-up and tail
    are a larger share), so read-bound tasks are also compared with this one. None without CuPy."""
    try:
        import cupy as cp
        from triton.testing import do_bench
    except ImportError:
        return None
    module = cp.RawModule(code=_READ_KERNEL)
    loop, once = module.get_function("evo_read"), module.get_function("evo_read_once")
    n = nbytes // 16
    buf, sink = cp.ones(n * 4, dtype=cp.uint32), cp.zeros(1, dtype=cp.uint32)
    sms = cp.cuda.Device().attributes["MultiProcessorCount"]
    best = 0.0
    shapes = [(sms * per, t, 4) for per in (4, 8, 16, 32) for t in (256, 512, 1024) if per * t <= 8192]
    shapes += [((n + t - 1) // t, t, 1) for t in (256, 512)]
    shapes += [((n + t * u - 1) // (t * u), t, -u) for t in (128, 256, 512) for u in (2, 4, 8, 16)]
    for grid, threads, unroll in shapes:
        kernel = once if unroll < 0 else loop
        try:
            ms = do_bench(lambda: kernel((grid,), (threads,), (buf, cp.uint64(n), sink, cp.int32(abs(unroll)))),
                          warmup=10, rep=100, return_mode="median")
        except cp.cuda.driver.CUDADriverError:  # a shape this GPU cannot launch
            continue
        best = max(best, n * 16 / (ms * 1e6))
    del buf, sink
    cp.get_default_memory_pool().free_all_blocks()
    return best


def sass_summary(ptx_dir, chip):
    """The emitted kernels' knobs and tensor-instruction mix: each PTX assembled with ptxas for
    `chip` and disassembled with cuobjdump (HGMMA: wgmma, HMMA: mma.sync, FFMA: CUDA cores)."""
    import glob
    import re
    import shutil
    tools = [shutil.which(t) or os.path.join("/usr/local/cuda/bin", t) for t in ("ptxas", "cuobjdump")]
    out = {}
    for ptx in sorted(glob.glob(os.path.join(ptx_dir, "*.ptx"))):
        entry = {}
        try:
            manifest = json.load(open(ptx[:-4] + ".json"))
            entry["knobs"] = [k.get("knobs") for k in manifest.get("kernels", [])]
        except Exception:
            pass
        cubin = ptx[:-4] + ".cubin"
        try:
            subprocess.run([tools[0], f"-arch={chip}", ptx, "-o", cubin], check=True,
                           capture_output=True, timeout=120)
            sass = subprocess.run([tools[1], "-sass", cubin], check=True, capture_output=True,
                                  text=True, timeout=120).stdout
            for op in ("HGMMA", "HMMA", "FFMA"):
                shapes = re.findall(rf"\b{op}(\.[0-9A-Za-z.]+)?", sass)
                entry[op] = len(shapes)
            entry["hgmma_shapes"] = sorted(set(re.findall(r"HGMMA\.[0-9x]+\.[A-Z0-9]+", sass)))
        except Exception as e:  # the summary is evidence, not a gate
            entry["error"] = str(e)[-300:]
        out[os.path.basename(ptx)] = entry
    return out


def main():
    args = bench_common.parse_args("bench", candidates=48, seconds=25)
    work = tempfile.mkdtemp(prefix="evo-bench-")
    rows = {}
    names = [n for n in suite() if not args.only or n in args.only.split(",")]
    for name in names:
        shapes, fn, matmul, *prep = suite()[name]
        row = evolve(args.evo_opt, name, args, work)
        row["eager_ms"], row["compile_ms"] = torch_times(fn, shapes, *prep)
        if row.get("verify") == "valid":
            try:
                row["loader_ms"] = loader_time(os.path.join(work, "ptx", name), name)
            except Exception as e:  # reported, never hiding the rest
                row["loader_error"] = str(e)[:300]
        row["matmul"] = matmul
        if not matmul and row.get("evolved_ms"):
            # Read-bound tasks: the achieved read rate over a read of the same bytes.
            in_bytes = sum(torch.Size(s).numel() * torch.tensor([], dtype=d).element_size()
                           for s, d in shapes)
            row["input_bytes"] = in_bytes
            try:  # evidence, never a reason to lose the rest of the run
                row["read_gbps_at_size"] = read_ceiling_at(in_bytes)
            except Exception as e:
                row["read_gbps_at_size"] = None
                row["read_at_size_error"] = str(e)[:300]
            if row["read_gbps_at_size"]:
                row["of_read_at_size"] = in_bytes / (row["evolved_ms"] * 1e6) / row["read_gbps_at_size"]
        try:  # the winners' knobs, for every task
            manifest = json.load(open(os.path.join(work, "ptx", name, name + ".json")))
            row["knobs"] = [k.get("knobs") for k in manifest.get("kernels", [])]
        except Exception:
            pass
        if matmul:
            row["sass"] = sass_summary(os.path.join(work, "ptx", name), args.chip)
            print(f"[bench] {name}: sass {json.dumps(row['sass'])}", flush=True)
        rows[name] = row
        print(f"[bench] {name}: {json.dumps({k: row.get(k) for k in ('baseline_ms', 'evolved_ms', 'eager_ms', 'compile_ms', 'verify', 'evaluated', 'valid', 'evolve_s')})}",
              flush=True)
        if "error" in row:
            print(row["error"], flush=True)
        # Written after every task: a call cut short by its time limit keeps what it measured.
        json.dump({"date": time.strftime("%Y-%m-%d"), "gpu": torch.cuda.get_device_name(0),
                   "rows": rows}, open(os.path.join(args.out, "bench.json"), "w"), indent=1)
    print()
    # "loader": evo's PTX through python/evo_runtime under do_bench, the harness PyTorch's times
    # come from; "vs best" compares the worker's time, "ld vs best" the loader's.
    print(f"{'bench':11s} {'base ms':>9s} {'evo ms':>8s} {'speedup':>8s} {'eager':>8s} {'compile':>8s} "
          f"{'vs best':>8s} {'loader':>8s} {'ld vs best':>10s} {'roofline':>9s} {'rd@size':>7s} "
          f"{'cands':>6s} {'valid':>6s} {'cand/min':>8s}")
    speedups = []
    total_evaluated = total_seconds = 0
    for name, r in rows.items():
        evo_ms, base = r.get("evolved_ms"), r.get("baseline_ms")
        best_torch = min(x for x in (r["eager_ms"], r["compile_ms"]) if x == x)
        sp = base / evo_ms if evo_ms and base else float("nan")
        if sp == sp:
            speedups.append(sp)
        rf = r.get("roofline", {})
        frac = rf.get("fraction_of_peak") if r["matmul"] else rf.get("fraction_of_copy")
        fmt = lambda x, p=3: f"{x:.{p}f}" if isinstance(x, (int, float)) and x == x else "-"
        # Search throughput: candidates evaluated on the GPU per minute of the whole evolve call
        # (lowering, compiling, verifying, timing and the finalists' re-measurement included).
        rate = r.get("evaluated", 0) / r["evolve_s"] * 60 if r.get("evolve_s") else None
        r["candidates_per_minute"] = rate
        total_evaluated += r.get("evaluated", 0)
        total_seconds += r.get("evolve_s", 0)
        ld = r.get("loader_ms")
        print(f"{name:11s} {fmt(base):>9s} {fmt(evo_ms):>8s} {fmt(sp, 2):>8s} {fmt(r['eager_ms']):>8s} "
              f"{fmt(r['compile_ms']):>8s} {fmt(best_torch / evo_ms if evo_ms else None, 2):>8s} "
              f"{fmt(ld):>8s} {fmt(best_torch / ld if ld else None, 2):>10s} "
              f"{fmt(frac, 2):>9s} {fmt(r.get('of_read_at_size'), 2):>7s} {r.get('evaluated', 0):>6} "
              f"{r.get('valid', 0):>6} {fmt(rate, 0):>8s}")
    if total_seconds:
        print(f"\nsearch throughput: {total_evaluated} candidates in {total_seconds:.0f} s of evolve "
              f"calls = {total_evaluated / total_seconds * 60:.0f} per minute")
    if speedups:
        speedups.sort()
        print(f"\nmedian speedup over the naive baseline: {speedups[len(speedups) // 2]:.2f}x "
              f"({len(speedups)} tasks, no LLM)")
    json.dump({"date": time.strftime("%Y-%m-%d"), "gpu": torch.cuda.get_device_name(0), "rows": rows},
              open(os.path.join(args.out, "bench.json"), "w"), indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
