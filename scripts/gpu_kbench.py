#!/usr/bin/env python3
"""The KernelBench-level-1-style suite on the GPU (section "kbench" of scripts/gpu-check): every
bench/kernelbench/*.mlir (one op a file) lowered, evolved LLM-free with a small budget, verified
end to end with evo-verify, and compared with PyTorch eager and torch.compile on the same shapes in
the same process. Survives any op failing (recorded, the rest go on). Prints one line per op and,
last, a table and the geometric mean of best(eager, compile) / evolved over the ops that ran;
writes $OUT/kbench.json after every op (a call cut short keeps what it measured).

  scripts/gpu_kbench.py [--part I/N] [--only a,b] [--candidates N] [--seconds S] [--deadline S]

--part I/N runs every N-th op from the I-th (1-based) of the suite's order, so each part mixes the
families; --deadline (seconds since start) stops starting new ops once too little time is left
(those are recorded as skipped).

OPS below is also what bench/kernelbench/check_cpu.py checks on the CPU: each op's PyTorch
function and input kinds against its MLIR file (shapes and dtypes come from the file's signature).
"""

import json
import math
import os
import re
import subprocess
import sys
import tempfile
import time

import torch
import torch.nn.functional as F

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SUITE_DIR = os.path.join(ROOT, "bench", "kernelbench")
sys.path.insert(0, os.path.join(ROOT, "scripts"))
from bench_common import evolve, first_error, parse_args, time_torch  # noqa: E402


def op(family, fn, inputs=(), bound="memory"):
    """family: the KernelBench family; fn: the PyTorch function of the MLIR function's arguments;
    inputs: a kind per argument (default "randn", see make_input); bound: "math" or "memory", which
    roofline fraction the table shows (of the FP32 peak, or of the copy bandwidth)."""
    return {"family": family, "fn": fn, "inputs": list(inputs), "bound": bound}


def mm(fn=torch.matmul, inputs=(), bound="math"):
    return op("matmul", fn, inputs, bound)


def act(fn, scale=3.0):
    return op("activation", fn, [("normal", scale)])


def pool(fn):
    return op("pooling", fn)


def conv(fn, bound="math"):
    return op("conv", fn, bound=bound)


def scan(fn, inputs=()):
    return op("scan", fn, inputs, bound="math")


def ce(x, t):
    return F.cross_entropy(x, t)


# The suite, in the order parts are dealt from. Each key is bench/kernelbench/<key>.mlir.
OPS = {
    # Matmul variants.
    "matmul_square": mm(),
    "matmul_rect": mm(),
    "bmm": mm(torch.bmm),
    "matmul_4d": mm(lambda a, b: torch.einsum("bijl,lk->bijk", a, b)),
    "matmul_3d": mm(),
    "matvec": mm(bound="memory"),
    "vecmat": mm(bound="memory"),
    "matmul_scalar": mm(lambda a: a * 3.14, bound="memory"),
    "matmul_large_k": mm(),
    "matmul_small_k": mm(),
    "matmul_irregular": mm(),
    "matmul_transposed_a": mm(lambda a, b: torch.matmul(a.T, b)),
    "matmul_transposed_b": mm(lambda a, b: torch.matmul(a, b.T)),
    "matmul_transposed_both": mm(lambda a, b: torch.matmul(a.T, b.T)),
    "matmul_diag": mm(lambda a, b: torch.diag(a) @ b),
    "matmul_triu": mm(lambda a, b: torch.triu(torch.matmul(a, b)), ["triu", "triu"]),
    "matmul_tril": mm(lambda a, b: torch.tril(torch.matmul(a, b)), ["tril", "tril"]),
    # Activations.
    "relu": act(torch.relu),
    "leaky_relu": act(lambda x: F.leaky_relu(x, negative_slope=0.01)),
    "sigmoid": act(torch.sigmoid),
    "tanh": act(torch.tanh),
    "gelu_erf": act(F.gelu),
    "gelu_tanh": act(lambda x: F.gelu(x, approximate="tanh")),
    "silu": act(F.silu),
    "mish": act(F.mish),
    "softplus": act(F.softplus, scale=12.0),  # past the threshold of 20 now and then
    "softsign": act(F.softsign),
    "hardtanh": act(lambda x: F.hardtanh(x, -1.0, 1.0)),
    "selu": act(torch.selu),
    "elu": act(lambda x: F.elu(x, alpha=1.0)),
    "hardsigmoid": act(F.hardsigmoid),
    "relu6": act(F.relu6, scale=4.0),
    "hardswish": act(F.hardswish),
    "logsigmoid": act(F.logsigmoid),
    # Normalisations.
    "layernorm": op("norm", lambda x, w, b: F.layer_norm(x, x.shape[1:], w, b, eps=1e-5)),
    "rmsnorm": op("norm", lambda x: x / torch.sqrt(torch.mean(x * x, dim=1, keepdim=True) + 1e-5)),
    "batchnorm": op("norm", lambda x, m, v, w, b: F.batch_norm(x, m, v, w, b, training=False, eps=1e-5),
                    ["randn", "randn", ("uniform", 0.5, 2.0), "randn", "randn"]),
    "groupnorm": op("norm", lambda x, w, b: F.group_norm(x, 8, w, b, eps=1e-5)),
    "instancenorm": op("norm", lambda x: F.instance_norm(x, eps=1e-5)),
    "l1norm": op("norm", lambda x: x / torch.sum(torch.abs(x), dim=1, keepdim=True)),
    "l2norm": op("norm", lambda x: x / torch.norm(x, p=2, dim=1, keepdim=True)),
    "frobenius_norm": op("norm", lambda x: x / torch.norm(x, p="fro")),
    # Softmax.
    "softmax": op("softmax", lambda x: torch.softmax(x, dim=1)),
    "log_softmax": op("softmax", lambda x: torch.log_softmax(x, dim=1)),
    "softmax_long": op("softmax", lambda x: torch.softmax(x, dim=1)),
    "log_softmax_long": op("softmax", lambda x: torch.log_softmax(x, dim=1)),
    # Reductions over a dimension.
    "sum_dim1_keepdim": op("reduction", lambda x: torch.sum(x, dim=1, keepdim=True)),
    "mean_dim1": op("reduction", lambda x: torch.mean(x, dim=1)),
    "max_dim1": op("reduction", lambda x: torch.max(x, dim=1)[0]),
    "min_dim1": op("reduction", lambda x: torch.min(x, dim=1)[0]),
    "prod_dim1": op("reduction", lambda x: torch.prod(x, dim=1), [("uniform", 0.995, 1.005)]),
    "argmax_dim1": op("reduction", lambda x: torch.argmax(x, dim=1)),
    "argmin_dim1": op("reduction", lambda x: torch.argmin(x, dim=1)),
    "sum_dim2": op("reduction", lambda x: torch.sum(x, dim=2)),
    "max_dim2_keepdim_expand": op("reduction", lambda x: torch.amax(x, dim=2, keepdim=True)),
    # Pooling.
    "maxpool1d": pool(lambda x: F.max_pool1d(x, kernel_size=4, stride=2, dilation=3)),
    "maxpool2d": pool(lambda x: F.max_pool2d(x, kernel_size=3, stride=2, dilation=2)),
    "maxpool2d_pad": pool(lambda x: F.max_pool2d(x, kernel_size=3, stride=2, padding=1)),
    "maxpool3d": pool(lambda x: F.max_pool3d(x, kernel_size=3, stride=2, dilation=3)),
    "avgpool1d": pool(lambda x: F.avg_pool1d(x, kernel_size=4, stride=2)),
    "avgpool2d": pool(lambda x: F.avg_pool2d(x, kernel_size=3)),
    "avgpool3d_pad": pool(lambda x: F.avg_pool3d(x, kernel_size=3, stride=2, padding=1)),
    # Convolutions.
    "conv2d_nchw": conv(F.conv2d),
    "conv2d_nhwc": conv(lambda x, w: F.conv2d(x.permute(0, 3, 1, 2), w.permute(3, 2, 0, 1)).permute(0, 2, 3, 1)),
    "conv2d_strided": conv(lambda x, w: F.conv2d(x, w, stride=2)),
    "conv2d_dilated": conv(lambda x, w: F.conv2d(x, w, dilation=2)),
    "conv2d_pad": conv(lambda x, w: F.conv2d(x, w, padding=1)),
    "conv2d_depthwise": conv(lambda x, w: F.conv2d(x, w.unsqueeze(1), groups=w.shape[0]), bound="memory"),
    "conv2d_grouped": conv(lambda x, w: F.conv2d(x, w, groups=4)),
    "conv2d_pointwise": conv(F.conv2d),
    "conv1d": conv(F.conv1d),
    "conv3d": conv(F.conv3d),
    "conv_transpose2d": conv(F.conv_transpose2d),
    # Losses.
    "mse_loss": op("loss", F.mse_loss),
    "cross_entropy": op("loss", ce, ["randn", "classes"]),
    "cross_entropy_gather": op("loss", ce, ["randn", "classes"]),
    "cross_entropy_probs": op("loss", ce, ["randn", "softmax"]),
    "kl_div_loss": op("loss", lambda p, t: F.kl_div(torch.log(p), t, reduction="batchmean"),
                      ["probs", "probs"]),
    "hinge_loss": op("loss", lambda p, t: torch.mean(torch.clamp(1 - p * t, min=0)), ["randn", "sign"]),
    "huber_loss": op("loss", F.smooth_l1_loss),
    "cosine_similarity_loss": op("loss", lambda p, t: torch.mean(1 - F.cosine_similarity(p, t, dim=1))),
    "triplet_margin_loss": op("loss", lambda a, p, n: F.triplet_margin_loss(a, p, n, margin=1.0)),
    # Scans (masked triangular sums).
    "cumsum": scan(lambda x: torch.cumsum(x, dim=1)),
    "cumsum_reverse": scan(lambda x: torch.cumsum(x.flip(1), dim=1).flip(1)),
    "cumsum_exclusive": scan(lambda x: torch.cat([torch.zeros_like(x[:, :1]), torch.cumsum(x, dim=1)[:, :-1]], dim=1)),
    "cumprod": scan(lambda x: torch.cumprod(x, dim=1), [("uniform", 0.998, 1.002)]),
    "masked_cumsum": scan(lambda x, mask: torch.cumsum(x * mask, dim=1), ["randn", "mask"]),
}

DTYPES = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16, "f64": torch.float64,
          "i64": torch.int64, "i32": torch.int32, "i1": torch.bool}
TENSOR = re.compile(r"tensor<((?:\d+x)*)(f32|f16|bf16|f64|i64|i32|i1)>")


def signature(text):
    """(name, [(shape, dtype, evo.range or None)], [(shape, dtype)]) of the file's func.func."""
    m = re.search(r"func\.func @(\w+)\((.*?)\)\s*->\s*(.*?)\s*\{\s*$", text, re.M)
    if not m:
        raise ValueError("no func.func signature found")
    name, args, results = m.groups()
    parsed = []
    for a in re.split(r",\s*(?=%)", args):
        t = TENSOR.search(a)
        shape = tuple(int(d) for d in t.group(1).split("x") if d)
        r = re.search(r"evo\.range = \[([^,\]]+),\s*([^\]]+)\]", a)
        parsed.append((shape, t.group(2), (float(r.group(1)), float(r.group(2))) if r else None))
    outs = [(tuple(int(d) for d in t.group(1).split("x") if d), t.group(2)) for t in TENSOR.finditer(results)]
    return name, parsed, outs


def kind_range(kind):
    """The closed interval a kind's values lie in (None: unbounded)."""
    if isinstance(kind, tuple) and kind[0] == "uniform":
        return kind[1], kind[2]
    # probs: each element at least 0.5 / row length, above 1e-6 for rows up to 500000.
    return {"softmax": (0.0, 1.0), "probs": (1e-6, 1.0), "sign": (-1.0, 1.0), "mask": (0.0, 1.0)}.get(kind)


def make_input(kind, shape, dtype, sig, device, gen):
    """One argument: randn, ("normal", scale), ("uniform", lo, hi), "softmax" (rows of a softmax
    over the last dimension), "probs" (rows of uniform [0.5, 1.5) values normalised to sum 1, no
    element near 0), "sign" (+-1), "classes" (class indices below the last dimension of
    the first argument), "mask" (booleans), "triu"/"tril" (a triangular randn matrix)."""
    dt = DTYPES[dtype]

    def randn(s=shape):
        return torch.randn(s, generator=gen, device=device, dtype=torch.float32)
    if kind == "classes":
        return torch.randint(0, sig[0][0][-1], shape, generator=gen, device=device, dtype=dt)
    if kind == "mask":
        return torch.rand(shape, generator=gen, device=device) < 0.5
    if isinstance(kind, tuple) and kind[0] == "normal":
        x = randn() * kind[1]
    elif isinstance(kind, tuple) and kind[0] == "uniform":
        x = kind[1] + (kind[2] - kind[1]) * torch.rand(shape, generator=gen, device=device)
    elif kind == "softmax":
        x = torch.softmax(randn(), dim=-1)
    elif kind == "probs":
        x = 0.5 + torch.rand(shape, generator=gen, device=device)
        x = x / x.sum(dim=-1, keepdim=True)
    elif kind == "sign":
        x = torch.where(randn() < 0, -1.0, 1.0)
    elif kind in ("triu", "tril"):
        x = torch.triu(randn()) if kind == "triu" else torch.tril(randn())
    else:
        assert kind == "randn", kind
        x = randn()
    return x.to(dt)


def mlir_path(name):
    return os.path.join(SUITE_DIR, name + ".mlir")


def make_inputs(name, device, seed=0, text=None):
    """The inputs of op `name` (shapes and dtypes from its MLIR file, or from `text`)."""
    text = text if text is not None else open(mlir_path(name)).read()
    sig = signature(text)[1]
    kinds = OPS[name]["inputs"] or ["randn"] * len(sig)
    assert len(kinds) == len(sig), f"{name}: {len(kinds)} input kinds for {len(sig)} arguments"
    gen = torch.Generator(device=device)
    gen.manual_seed(seed)
    return [make_input(k, s, d, sig, device, gen) for k, (s, d, _) in zip(kinds, sig)]


def lower_check(evo, src):
    """evo-lower-to-gpu alone (CPU, seconds): None if it lowers, else its first diagnostic line."""
    r = subprocess.run([evo, src, "--evo-lower-to-gpu", "-o", os.devnull], capture_output=True, text=True)
    return None if r.returncode == 0 else (first_error(r.stderr) or f"exit {r.returncode}")


def run_op(name, args, work):
    spec = OPS[name]
    src = mlir_path(name)
    row = {"family": spec["family"], "bound": spec["bound"]}
    diag = lower_check(args.evo_opt, src)
    if diag:
        row["status"] = "lower-failed: " + diag
    else:
        row.update(evolve(args.evo_opt, src, name, work, args.candidates, args.seconds, args.chip,
                          extra=f"run-time-budget={args.seconds} final-rounds=3 final-runs=30"))
        if row["evolve_rc"] != 0:
            row["status"] = "evolve-failed: " + first_error(row.get("error", ""))
        elif row.get("verify") == "error":
            row["status"] = "verify-failed: " + first_error(row.get("verify_error", ""))
        elif row.get("verify") != "valid":
            row["status"] = f"verify-failed: {row.get('verify')}"
        else:
            row["status"] = "ok"
    try:
        inputs = make_inputs(name, "cuda")
        row["eager_ms"], row["compile_ms"] = time_torch(spec["fn"], inputs)
        del inputs
    except Exception as e:  # PyTorch failing (out of memory, ...) is recorded, never hiding the rest
        row["torch_error"] = str(e)[:300]
    torch.cuda.empty_cache()
    torch._dynamo.reset()
    times = [t for t in (row.get("eager_ms"), row.get("compile_ms")) if t is not None and t == t]
    row["best_torch_ms"] = min(times) if times else None
    evo_ms = row.get("evolved_ms")
    if row["status"] == "ok" and evo_ms and row["best_torch_ms"]:
        row["ratio"] = row["best_torch_ms"] / evo_ms
    rf = row.get("roofline") or {}
    row["roofline_fraction"] = rf.get("fraction_of_peak" if spec["bound"] == "math" else "fraction_of_copy")
    return row


def table(rows):
    fmt = lambda x, p=3: f"{x:.{p}f}" if isinstance(x, (int, float)) and x == x else "-"
    print(f"{'op':24s} {'family':10s} {'base ms':>9s} {'evo ms':>8s} {'eager':>8s} {'compile':>8s} "
          f"{'best/evo':>8s} {'roofline':>8s}  status")
    for name, r in rows.items():
        print(f"{name:24s} {r['family']:10s} {fmt(r.get('baseline_ms')):>9s} {fmt(r.get('evolved_ms')):>8s} "
              f"{fmt(r.get('eager_ms')):>8s} {fmt(r.get('compile_ms')):>8s} {fmt(r.get('ratio'), 2):>8s} "
              f"{fmt(r.get('roofline_fraction'), 2):>8s}  {r['status']}")
    ratios = [r["ratio"] for r in rows.values() if r.get("ratio")]
    ok = sum(1 for r in rows.values() if r["status"] == "ok")
    geo = math.exp(sum(math.log(x) for x in ratios) / len(ratios)) if ratios else None
    print(f"\n{ok} of {len(rows)} ops ok; geometric mean of best(eager, compile) / evolved over the "
          f"{len(ratios)} that ran: {fmt(geo, 3)}")
    return geo


def main():
    def extra(ap):
        ap.add_argument("--part", default="1/1", help="I/N: every N-th op from the I-th (1-based)")
        ap.add_argument("--deadline", type=float, default=450,
                        help="seconds after start past which no op is started (a part must fit one "
                             "device call)")
        ap.add_argument("--op-estimate", type=float, default=30,
                        help="seconds one op is assumed to take when checking the deadline")
    args = parse_args("op", candidates=40, seconds=6, extra=extra)
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cudnn.benchmark = True
    i, n = (int(x) for x in args.part.split("/"))
    names = [k for j, k in enumerate(OPS) if j % n == i - 1]
    if args.only:
        names = [k for k in names if k in args.only.split(",")]
    t0 = time.time()
    work = tempfile.mkdtemp(prefix="evo-kbench-")
    os.makedirs(args.out, exist_ok=True)
    rows = {}

    def save(geo=None):
        json.dump({"date": time.strftime("%Y-%m-%d"), "gpu": torch.cuda.get_device_name(0),
                   "part": args.part, "candidates": args.candidates, "seconds": args.seconds,
                   "geomean_best_torch_over_evolved": geo, "rows": rows},
                  open(os.path.join(args.out, "kbench.json"), "w"), indent=1)

    for name in names:
        if time.time() - t0 + args.op_estimate > args.deadline:
            rows[name] = {"family": OPS[name]["family"], "status": "skipped: part time limit"}
            continue
        ts = time.time()
        try:
            rows[name] = run_op(name, args, work)
        except Exception as e:  # anything else: recorded, the suite goes on
            rows[name] = {"family": OPS[name]["family"], "status": f"harness-failed: {str(e)[:200]}"}
        rows[name]["op_s"] = round(time.time() - ts, 1)
        r = rows[name]
        print(f"[kbench] {name}: " + json.dumps({k: r.get(k) for k in (
            "status", "baseline_ms", "evolved_ms", "eager_ms", "compile_ms", "evaluated", "valid",
            "evolve_s", "op_s")}), flush=True)
        save()
    print()
    save(table(rows))
    print(f"kbench part {args.part}: {time.time() - t0:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
