#!/usr/bin/env python3
"""Runs evo-emitted tensor-core matmul kernels outside evo's worker, against torch.matmul.

For the GPU host: each argument is an evo-emit-ptx manifest (NAME.json beside NAME.ptx) of a
plain matmul C[M, N] = A[M, K] @ B[K, N] (two inputs, one output, tensor maps as the manifest's
buffers say). The script builds the tensor maps with the driver's cuTensorMapEncodeTiled from the
manifest's "tensor_map" entries, launches the kernel on random inputs, checks it against
torch.matmul (f32 reference) and times both with CUDA events. One line per manifest; a JSON
record per manifest on stdout's last line when --json is given.

This is an independent check of the emitter (no evo-eval-worker, no evo_runtime): the worker
and the runtimes are checked by scripts/gpu-check.
"""
import argparse
import ctypes
import json
import os
import sys

import torch

DTYPES = {"f16": torch.float16, "bf16": torch.bfloat16, "f32": torch.float32}
TMA_DTYPE = {"f16": 6, "f32": 7, "bf16": 9}
SWIZZLE = {0: 0, 32: 1, 64: 2, 128: 3}


def check(r, what):
    if r != 0:
        raise RuntimeError(f"{what} failed: CUresult {r}")


def encode(cuda, dtype, addr, tm):
    rank = len(tm["dims"])
    out = (ctypes.c_uint64 * 16)()
    dims = (ctypes.c_uint64 * rank)(*tm["dims"])
    strides = (ctypes.c_uint64 * max(rank - 1, 1))(*tm["strides"])
    box = (ctypes.c_uint32 * rank)(*tm["box"])
    estr = (ctypes.c_uint32 * rank)(*([1] * rank))
    check(cuda.cuTensorMapEncodeTiled(out, TMA_DTYPE[dtype], rank, ctypes.c_void_p(addr), dims,
                                      strides, box, estr, 0, SWIZZLE[tm["swizzle"]], 3, 0),
          "cuTensorMapEncodeTiled")
    return torch.frombuffer(bytearray(bytes(out)), dtype=torch.uint8).cuda()


def run(cuda, path, iters):
    m = json.load(open(path))
    ptx = open(os.path.join(os.path.dirname(path), m["ptx"]["file"]), "rb").read() + b"\0"
    mod = ctypes.c_void_p()
    check(cuda.cuModuleLoadData(ctypes.byref(mod), ptx), "cuModuleLoadData")
    (launch,) = m["launches"]
    fn = ctypes.c_void_p()
    check(cuda.cuModuleGetFunction(ctypes.byref(fn), mod, launch["kernel"].encode()),
          "cuModuleGetFunction")
    smem = launch["dynamic_shared_memory"]
    check(cuda.cuFuncSetAttribute(fn, 8, smem), "cuFuncSetAttribute")
    bufs = m["buffers"]
    for b in bufs:
        if b["role"] == "tensor_map" and "tensor_map" not in b:
            sys.exit(f"{path}: tensor map '{b['name']}' has no arguments (a manifest of an evo-opt "
                     "from before tensor maps were written to manifests): emit it again")
    ins = [b for b in bufs if b["role"] == "input"]
    (outb,) = [b for b in bufs if b["role"] == "output"]
    g = torch.Generator(device="cuda").manual_seed(0)
    tensors = {}
    for b in ins:
        tensors[b["index"]] = (torch.rand(b["shape"], generator=g, device="cuda") - 0.5).to(
            DTYPES[b["dtype"]])
    tensors[outb["index"]] = torch.full(outb["shape"], float("nan"), device="cuda",
                                        dtype=DTYPES[outb["dtype"]])
    for b in bufs:
        if b["role"] == "tensor_map":
            tm = b["tensor_map"]
            src = tensors[tm["source"]]
            tensors[b["index"]] = encode(cuda, [x for x in bufs if x["index"] == tm["source"]][0]
                                         ["dtype"], src.data_ptr(), tm)
    ptrs = [ctypes.c_uint64(tensors[i].data_ptr()) for i in launch["args"]]
    params = (ctypes.c_void_p * len(ptrs))(*[ctypes.addressof(p) for p in ptrs])
    stream = torch.cuda.current_stream().cuda_stream

    def go():
        gx, gy, gz = launch["grid"]
        bx, by, bz = launch["block"]
        check(cuda.cuLaunchKernel(fn, gx, gy, gz, bx, by, bz, smem, ctypes.c_void_p(stream),
                                  params, None), "cuLaunchKernel")

    go()
    torch.cuda.synchronize()
    a, bm = (tensors[b["index"]] for b in ins)
    ref = torch.matmul(a.float(), bm.float())
    got = tensors[outb["index"]].float()
    err = ((got - ref).abs() / (ref.abs() + 1.0)).max().item()
    ok = bool(torch.isfinite(got).all().item()) and err < 2e-2

    def timeit(f):
        for _ in range(3):
            f()
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        for _ in range(iters):
            f()
        e.record()
        torch.cuda.synchronize()
        return s.elapsed_time(e) / iters

    ms = timeit(go)
    c = torch.empty_like(tensors[outb["index"]])
    ms_torch = timeit(lambda: torch.matmul(a, bm, out=c))
    M, K = a.shape[-2], a.shape[-1]
    N = bm.shape[-1]
    batch = a.numel() // (M * K)
    tf = 2.0 * batch * M * N * K / 1e9
    return {"name": m["function"], "shape": [batch, M, N, K], "dtype": ins[0]["dtype"],
            "knobs": m["kernels"][0]["knobs"], "ok": ok, "max_rel_err": err, "ms": ms,
            "tflops": tf / ms, "torch_ms": ms_torch, "torch_tflops": tf / ms_torch,
            "of_torch": ms_torch / ms}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("manifests", nargs="+")
    ap.add_argument("--iters", type=int, default=20)
    ap.add_argument("--json", help="write all records to this file")
    args = ap.parse_args()
    torch.zeros(1, device="cuda")  # the primary context, current
    cuda = ctypes.CDLL("libcuda.so.1")
    records, bad = [], 0
    for path in args.manifests:
        try:
            r = run(cuda, path, args.iters)
        except Exception as e:  # one broken kernel must not hide the others
            r = {"name": os.path.basename(path), "ok": False, "error": str(e)}
        records.append(r)
        bad += not r["ok"]
        if "error" in r:
            print(f"{r['name']:<24} ERROR {r['error']}", flush=True)
        else:
            print(f"{r['name']:<24} {'ok ' if r['ok'] else 'BAD'} err={r['max_rel_err']:.1e} "
                  f"{r['ms']:8.3f} ms {r['tflops']:7.1f} TFLOP/s | torch {r['torch_ms']:8.3f} ms "
                  f"{r['torch_tflops']:7.1f} | {r['of_torch']:.2f}x", flush=True)
    if args.json:
        json.dump(records, open(args.json, "w"), indent=1)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
