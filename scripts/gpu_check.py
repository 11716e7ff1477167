#!/usr/bin/env python3
"""evo-opt's GPU checks, run on a machine with an NVIDIA GPU (see scripts/gpu-check).

Every case is compiled by evo-opt (--evo-pipeline, real ptxas), loaded through the CUDA driver
API with the manifest's launch dimensions (python/evo_runtime), run on fresh random inputs with
outputs poisoned with NaN beforehand, and compared with a float64 PyTorch reference by the
verifier's own rule and tolerance table (share/evo-opt/tolerances.json, the file evo-opt embeds):
    |out - ref| <= rtol[dtype] * (|ref| + RMS(ref))   for every element with a finite reference,
    and no NaN/Inf may appear where the reference has none (an unwritten element stays NaN).
Each case is also timed (CUDA events, median, L2 flushed between runs) next to PyTorch eager.
Sections: emitters, adversarial (the hand-written adversarial suites of test/Evaluation, with
their false accepts and false rejects), verify (evo-verify's own numbers), determinism (the
tensor-core seeds at the GPT-2 block's GEMM shapes, 1000 launches each, bit for bit), overhead
(what the checks of every timed launch cost per candidate evaluation, on bench tasks).
The last thing printed is a table; details go to $OUT/gpu_check.json.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import torch

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "python"))
from evo_runtime import EvoModule  # noqa: E402

F = torch.nn.functional


def load_tolerances():
    """The verifier's relative tolerances per dtype: one table for evo-opt and this script."""
    with open(os.path.join(ROOT, "share", "evo-opt", "tolerances.json")) as f:
        rtol = json.load(f)["rtol"]
    return {torch.float64: rtol["f64"], torch.float32: rtol["f32"], torch.float16: rtol["f16"],
            torch.bfloat16: rtol["bf16"]}


RTOL = load_tolerances()


def gelu_tanh(v):
    return 0.5 * v * (1 + torch.tanh(0.7978845608 * (v + 0.044715 * v ** 3)))


def layernorm_mean(x, w, b):
    return F.layer_norm(x, (x.shape[-1],), w, b, 1e-5), x.mean(-1)


def rmsnorm(x, w):
    return x * torch.rsqrt((x * x).mean(-1, keepdim=True) + 1e-6) * w


# (mlir file, pipeline options, reference on float64 inputs, input dtypes)
EX = "examples"
G = "test/GPU/Inputs"
CASES = [
    # The examples: their naive baseline, then other schedules.
    (f"{EX}/softmax.mlir", "", lambda x: torch.softmax(x, 1)),
    (f"{EX}/softmax.mlir", "reduction-strategy=warp vector-width=4", lambda x: torch.softmax(x, 1)),
    (f"{EX}/softmax.mlir", "reduction-strategy=block vector-width=4 block-size=256", lambda x: torch.softmax(x, 1)),
    (f"{EX}/matmul.mlir", "", lambda a, b: a @ b),
    (f"{EX}/matmul.mlir", "tile-sizes=64,64,16 thread-tile=4,4", lambda a, b: a @ b),
    (f"{EX}/matmul.mlir", "tile-sizes=128,128,8 thread-tile=8,8", lambda a, b: a @ b),
    (f"{EX}/bias_gelu.mlir", "", lambda x, b: gelu_tanh(x + b)),
    (f"{EX}/bias_gelu.mlir", "vector-width=4 elements-per-thread=4 block-size=128", lambda x, b: gelu_tanh(x + b)),
    (f"{EX}/row_sum.mlir", "", lambda x: x.sum(1)),
    (f"{EX}/row_sum.mlir", "reduction-strategy=warp vector-width=4 accumulators=2", lambda x: x.sum(1)),
    (f"{EX}/row_sum.mlir", "reduction-strategy=block block-size=512 vector-width=4", lambda x: x.sum(1)),
    # Edge cases of each emitter.
    (f"{G}/tail_tanh.mlir", "", torch.tanh),
    (f"{G}/tail_tanh.mlir", "elements-per-thread=3 block-size=64", torch.tanh),
    (f"{G}/add_bias_f16.mlir", "vector-width=8", lambda x, b: x + b),
    (f"{G}/col_sum.mlir", "", lambda x: x.sum(0)),
    (f"{G}/col_sum.mlir", "accumulators=4", lambda x: x.sum(0)),
    (f"{G}/col_sum.mlir", "split=16 accumulators=4", lambda x: x.sum(0)),
    (f"{EX}/row_sum.mlir", "reduction-strategy=block block-size=256 vector-width=4 split=4", lambda x: x.sum(1)),
    (f"{G}/row_max.mlir", "reduction-strategy=warp accumulators=4", lambda x: x.amax(1)),
    (f"{G}/row_max.mlir", "reduction-strategy=block block-size=96", lambda x: x.amax(1)),
    (f"{G}/rms_f16.mlir", "reduction-strategy=block vector-width=8", lambda x: (x * x).mean(1)),
    (f"{G}/rms_f16.mlir", "", lambda x: (x * x).mean(1)),
    (f"{G}/softmax_dim0.mlir", "reduction-strategy=block block-size=64", lambda x: torch.softmax(x, 0)),
    (f"{G}/softmax_dim0.mlir", "", lambda x: torch.softmax(x, 0)),
    (f"{G}/softmax_f16.mlir", "reduction-strategy=warp vector-width=8", lambda x: torch.softmax(x, 1)),
    (f"{G}/bmm_f16.mlir", "", lambda a, b: torch.bmm(a, b)),
    (f"{G}/bmm_f16.mlir", "tile-sizes=64,64,32 thread-tile=4,4", lambda a, b: torch.bmm(a, b)),
    (f"{G}/matmul_odd.mlir", "accumulators=2", lambda a, b: a @ b),
    (f"{G}/mm_relu.mlir", "", lambda a, b: torch.relu(a @ b)),
    (f"{G}/mm_relu.mlir", "tile-sizes=32,32,16 thread-tile=2,2", lambda a, b: torch.relu(a @ b)),
    (f"{G}/mm_relu.mlir", "tile-sizes=32,32,16 thread-tile=4,4 vector-width=4 prefetch=1", lambda a, b: torch.relu(a @ b)),
    (f"{G}/matvec.mlir", "", lambda a, x: a @ x),
    (f"{G}/conv2d.mlir", "", lambda x, w: F.conv2d(x, w)),
    (f"{G}/conv2d.mlir", "accumulators=2 block-size=128", lambda x, w: F.conv2d(x, w)),
    (f"{G}/maxpool2d.mlir", "", lambda x: F.max_pool2d(x, 2)),
    (f"{G}/transpose_bias.mlir", "", lambda x, b: x.transpose(1, 2) + b),
    (f"{G}/transpose_bias.mlir", "transpose-tile=32 block-size=256", lambda x, b: x.transpose(1, 2) + b),
    (f"{G}/transpose_bias.mlir", "transpose-tile=64 block-size=1024", lambda x, b: x.transpose(1, 2) + b),
    # Row programs (EmitRows.cpp): whole softmax / norm functions in one kernel.
    (f"{EX}/softmax.mlir", "reduction-strategy=block block-size=256 vector-width=4 cache-row=1", lambda x: torch.softmax(x, 1)),
    (f"{G}/layernorm_mean.mlir", "", layernorm_mean),
    (f"{G}/layernorm_mean.mlir", "reduction-strategy=warp vector-width=4 cache-row=1", layernorm_mean),
    (f"{G}/layernorm_mean.mlir", "reduction-strategy=block block-size=256 vector-width=4 cache-row=1", layernorm_mean),
    (f"{G}/layernorm_mean.mlir", "reduction-strategy=block block-size=128 vector-width=2", layernorm_mean),
    (f"{G}/rmsnorm_f16.mlir", "", rmsnorm),
    (f"{G}/rmsnorm_f16.mlir", "reduction-strategy=warp vector-width=8 cache-row=1", rmsnorm),
    (f"{G}/rmsnorm_f16.mlir", "reduction-strategy=block block-size=256 vector-width=8 cache-row=1", rmsnorm),
]


def compile_case(evo, path, options, outdir):
    opts = f"output-dir={outdir}" + (f" {options}" if options else "")
    cmd = [evo, os.path.join(ROOT, path), f"--evo-pipeline={opts}", "-o", os.devnull]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"evo-opt failed ({r.returncode}):\n{r.stderr}")
    name = os.path.splitext(os.path.basename(path))[0]
    return os.path.join(outdir, name + ".json")


def make_inputs(module, gen):
    ins = []
    for b in module.buffers:
        if b["role"] != "input":
            continue
        dtype = getattr(torch, {"f32": "float32", "f16": "float16", "bf16": "bfloat16"}[b["dtype"]])
        ins.append(torch.randn(b["shape"], generator=gen, device="cuda", dtype=torch.float32).to(dtype))
    return ins


def check(module, reference, trials, seed):
    worst = 0.0
    for t in range(trials):
        gen = torch.Generator(device="cuda").manual_seed(seed + t)
        ins = make_inputs(module, gen)
        outs = module.allocate_outputs(fill=float("nan"))  # poison: unwritten elements stay NaN
        module(*ins, outputs=outs)
        torch.cuda.synchronize()
        refs = reference(*[x.double() for x in ins])
        refs = refs if isinstance(refs, (tuple, list)) else [refs]
        for out, ref in zip(outs, refs):
            finite = torch.isfinite(ref)
            o = out.double()
            bad = (~torch.isfinite(o)) & finite
            if bad.any():
                return float("inf"), f"{int(bad.sum())} elements NaN/Inf or unwritten (trial {t})"
            r = ref[finite]
            d = (o - ref)[finite].abs()
            rms = r.pow(2).mean().sqrt() if r.numel() else torch.tensor(0.0, dtype=torch.float64)
            scale = r.abs() + rms
            rtol = RTOL[out.dtype]
            # The verifier's rule: worst |out - ref| / (|ref| + RMS(ref)), to be <= rtol.
            err = (d / scale.clamp_min(1e-300)).max().item() if d.numel() else 0.0
            worst = max(worst, err)
            over = int((d > rtol * scale).sum())
            if over:
                return err, (f"{over} elements off by more than {rtol:g} x (|ref| + RMS(ref)), worst "
                             f"{err:.2e} (trial {t})")
    return worst, "ok"


_flush = None


def bench(fn, reps=50):
    """Median of `reps` CUDA-event timings; a 256 MiB write between runs flushes L2 (60 MB)."""
    global _flush
    if _flush is None:
        _flush = torch.empty(64 << 20, dtype=torch.float32, device="cuda")
    for _ in range(3):
        fn()
    times = []
    for _ in range(reps):
        _flush.zero_()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    times.sort()
    return times[len(times) // 2]


# The determinism section: GEMMs with fused epilogues (bias, residual, gelu) at the GPT-2 block's
# shapes, on every tensor-core configuration the search seeds (lib/Evolution/Genome.cpp). Every
# kernel of evo-opt is deterministic by construction (no atomics, a fixed order of every sum),
# so launches on the same inputs must agree bit for bit; any difference is a race.
DETERMINISM_SHAPES = [  # name, M, K, N, epilogue
    ("qkv_s128", 128, 768, 2304, "bias"), ("proj_s128", 128, 768, 768, "bias_residual"),
    ("fc_s128", 128, 768, 3072, "bias_gelu"), ("mlp_s128", 128, 3072, 768, "bias_residual"),
    ("fc_s1024", 1024, 768, 3072, "bias_gelu"), ("mlp_s1024", 1024, 3072, 768, "bias_residual"),
    ("odd", 200, 264, 328, "bias"),
]
DETERMINISM_CONFIGS = [  # BM, BN, stages, persistent: Genome.cpp's tensor-core seeds
    (128, 256, 3, 0), (128, 256, 4, 0), (128, 256, 4, 132), (128, 128, 4, 0), (128, 128, 4, 132),
    (128, 128, 6, 0), (128, 64, 6, 0), (128, 64, 4, 264), (128, 64, 6, 132), (64, 128, 6, 0),
]


def gemm_source(name, m, k, n, epilogue, elt):
    """A torch-mlir style f16/bf16 linear layer: matmul accumulating in f32, then the epilogue."""
    ins = [f"%a: tensor<{m}x{k}x{elt}>", f"%w: tensor<{k}x{n}x{elt}>", f"%bias: tensor<{n}x{elt}>"]
    maps, operands, types, args = ["#x", "#col"], ["%mm", "%bias"], [f"tensor<{m}x{n}xf32>", f"tensor<{n}x{elt}>"], ["%mv: f32", f"%bv: {elt}"]
    body = [f"%b32 = arith.extf %bv : {elt} to f32", "%s = arith.addf %mv, %b32 : f32"]
    if epilogue == "bias_residual":
        ins.append(f"%r: tensor<{m}x{n}x{elt}>")
        maps.append("#x"); operands.append("%r"); types.append(f"tensor<{m}x{n}x{elt}>"); args.append(f"%rv: {elt}")
        body += [f"%r32 = arith.extf %rv : {elt} to f32", "%y = arith.addf %s, %r32 : f32"]
    elif epilogue == "bias_gelu":  # 0.5 s (1 + tanh(0.79788 (s + 0.044715 s^3)))
        body += ["%c0 = arith.constant 0.5 : f32", "%c1 = arith.constant 1.0 : f32",
                 "%c2 = arith.constant 0.7978845608 : f32", "%c3 = arith.constant 0.044715 : f32",
                 "%s2 = arith.mulf %s, %s : f32", "%s3 = arith.mulf %s2, %s : f32",
                 "%u = arith.mulf %c3, %s3 : f32", "%v = arith.addf %s, %u : f32",
                 "%g = arith.mulf %c2, %v : f32", "%t = math.tanh %g : f32",
                 "%t1 = arith.addf %c1, %t : f32", "%h = arith.mulf %c0, %s : f32",
                 "%y = arith.mulf %h, %t1 : f32"]
    body.append(f"%yt = arith.truncf {'%s' if epilogue == 'bias' else '%y'} : f32 to {elt}")
    lines = ["#x = affine_map<(i, j) -> (i, j)>", "#col = affine_map<(i, j) -> (j)>",
             f"func.func @{name}({', '.join(ins)}) -> tensor<{m}x{n}x{elt}> {{",
             "  %zero = arith.constant 0.0 : f32",
             f"  %e32 = tensor.empty() : tensor<{m}x{n}xf32>",
             f"  %z = linalg.fill ins(%zero : f32) outs(%e32 : tensor<{m}x{n}xf32>) -> tensor<{m}x{n}xf32>",
             f"  %mm = linalg.matmul ins(%a, %w : tensor<{m}x{k}x{elt}>, tensor<{k}x{n}x{elt}>) "
             f"outs(%z : tensor<{m}x{n}xf32>) -> tensor<{m}x{n}xf32>",
             f"  %e = tensor.empty() : tensor<{m}x{n}x{elt}>",
             f"  %out = linalg.generic {{indexing_maps = [{', '.join(maps + ['#x'])}], "
             f"iterator_types = [\"parallel\", \"parallel\"]}} ins({', '.join(operands)} : "
             f"{', '.join(types)}) outs(%e : tensor<{m}x{n}x{elt}>) {{",
             f"  ^bb0({', '.join(args + ['%o: ' + elt])}):"]
    lines += ["    " + l for l in body]
    lines += [f"    linalg.yield %yt : {elt}", f"  }} -> tensor<{m}x{n}x{elt}>",
              f"  return %out : tensor<{m}x{n}x{elt}>", "}"]
    return "\n".join(lines) + "\n"


def run_determinism(args, rows_out):
    """Each tensor-core configuration on each shape: `--determinism-launches` launches on the same
    inputs, the outputs poisoned (NaN) before each and compared bit for bit with the first
    launch's; the first is also compared with PyTorch in f32 (a sanity check of the kernel)."""
    rows = []
    if torch.cuda.get_device_capability(0) != (9, 0):
        # The wgmma schedules need sm_90a (an H100/H200): elsewhere there is nothing to run.
        rows_out["determinism"] = [{"verdict": "SKIP", "reason": "not a compute capability 9.0 GPU"}]
        return [], ["determinism: skipped (the wgmma schedules need compute capability 9.0)"]
    work = tempfile.mkdtemp(prefix="evo-determinism-")
    tdt = {"f16": torch.float16, "bf16": torch.bfloat16}
    cases = [(s, c, elt) for s in DETERMINISM_SHAPES for c in DETERMINISM_CONFIGS for elt in ("f16",)]
    cases += [(s, c, "bf16") for s in DETERMINISM_SHAPES[:2] for c in DETERMINISM_CONFIGS[:3]]
    deadline = time.time() + args.determinism_seconds
    for i, ((name, m, k, n, epi), (bm, bn, stages, pers), elt) in enumerate(cases):
        options = f"tile-sizes={bm},{bn},64 wgmma=1 stages={stages} persistent={pers} chip=sm_90a"
        row = {"case": f"{name}_{elt}", "shape": [m, k, n], "epilogue": epi, "options": options}
        rows.append(row)
        if time.time() > deadline:
            row["verdict"], row["reason"] = "SKIP", "out of time (--determinism-seconds)"
            continue
        try:
            src = os.path.join(work, f"{i}.mlir")
            with open(src, "w") as f:
                f.write(gemm_source(name, m, k, n, epi, elt))
            outdir = os.path.join(work, str(i))
            opts = f"output-dir={outdir} {options}"
            r = subprocess.run([args.evo_opt, src, f"--evo-pipeline={opts}", "-o", os.devnull],
                               capture_output=True, text=True)
            if r.returncode != 0:
                row["verdict"], row["reason"] = "REFUSED", r.stderr.strip().splitlines()[0][:300]
                print(f"[determinism {i + 1}/{len(cases)}] {row['case']} {options}: refused: {row['reason']}", flush=True)
                continue
            module = EvoModule(os.path.join(outdir, name + ".json"))
            row["kernels"] = len(module.manifest["kernels"])
            gen = torch.Generator(device="cuda").manual_seed(args.seed + i)
            a = torch.randn(m, k, generator=gen, device="cuda").to(tdt[elt])
            w = (torch.randn(k, n, generator=gen, device="cuda") / k ** 0.5).to(tdt[elt])
            bias = (0.1 * torch.randn(n, generator=gen, device="cuda")).to(tdt[elt])
            ins = [a, w, bias]
            if epi == "bias_residual":
                ins.append(torch.randn(m, n, generator=gen, device="cuda").to(tdt[elt]))
            outs, ws = module.allocate_outputs(), module.allocate_workspace()
            outs[0].fill_(float("nan"))
            module(*ins, outputs=outs, workspace=ws)
            first = outs[0].clone()
            s = a.float() @ w.float() + bias.float()
            if epi == "bias_residual":
                s = s + ins[3].float()
            elif epi == "bias_gelu":
                s = F.gelu(s, approximate="tanh")
            ref = s.to(tdt[elt]).float()
            err = ((first.float() - ref).abs().max() / ref.pow(2).mean().sqrt()).item()
            bits = first.view(torch.int16)
            differing = torch.zeros((), dtype=torch.int64, device="cuda")
            worst = torch.zeros((), dtype=torch.int64, device="cuda")
            t0 = time.time()
            for _ in range(args.determinism_launches):
                outs[0].fill_(float("nan"))
                module(*ins, outputs=outs, workspace=ws)
                d = (outs[0].view(torch.int16) != bits).sum()
                differing += (d > 0).to(torch.int64)
                worst = torch.maximum(worst, d)
            torch.cuda.synchronize()
            row.update(launches=args.determinism_launches, differing_launches=int(differing.item()),
                       most_elements_differing=int(worst.item()), norm_err_vs_torch=err,
                       loop_s=round(time.time() - t0, 2))
            tol = 2e-2  # f16/bf16 outputs after an f32 sum: a few output ulps relative to RMS
            ok = row["differing_launches"] == 0 and err == err and err <= tol
            row["verdict"] = "PASS" if ok else "FAIL"
            row["reason"] = "ok" if ok else (
                f"{row['differing_launches']} of {row['launches']} launches differ from the first "
                f"(up to {row['most_elements_differing']} elements); error vs torch {err:.2e}")
        except Exception as e:  # a failing case must not hide the others
            row["verdict"], row["reason"] = "FAIL", f"{type(e).__name__}: {e}"
        print(f"[determinism {i + 1}/{len(cases)}] {row['case']} {options}: {row['verdict']} {row['reason']}",
              flush=True)
    rows_out["determinism"] = rows
    table = [f"{'case':16s} {'BM,BN,stages,persistent':24s} {'verdict':8s} {'differing':>12s} {'err vs torch':>12s}"]
    for r in rows:
        cfg = r["options"].split()
        knobs = f"{cfg[0].split('=')[1].rsplit(',', 1)[0]},{cfg[2].split('=')[1]},{cfg[3].split('=')[1]}"
        diff = f"{r['differing_launches']}/{r['launches']}" if "launches" in r else "-"
        err = f"{r['norm_err_vs_torch']:.1e}" if "norm_err_vs_torch" in r else "-"
        table.append(f"{r['case']:16s} {knobs:24s} {r['verdict']:8s} {diff:>12s} {err:>12s}")
    return [r for r in rows if r["verdict"] == "FAIL"], table


def run_emitters(args, rows_out):
    """Issue 2's matrix: every emitter and schedule, checked against PyTorch in float64."""
    rows = []
    work = tempfile.mkdtemp(prefix="evo-gpu-")
    for i, (path, options, reference) in enumerate(CASES):
        outdir = os.path.join(work, str(i))
        row = {"case": os.path.basename(path), "options": options or "(baseline)"}
        try:
            t0 = time.time()
            manifest = compile_case(args.evo_opt, path, options, outdir)
            row["compile_s"] = round(time.time() - t0, 2)
            module = EvoModule(manifest)
            row["rel_err"], row["reason"] = check(module, reference, args.trials, args.seed)
            row["verdict"] = "PASS" if row["reason"] == "ok" else "FAIL"
            gen = torch.Generator(device="cuda").manual_seed(args.seed)
            ins = make_inputs(module, gen)
            outs = module.allocate_outputs()
            row["evo_ms"] = bench(lambda: module(*ins, outputs=outs))
            row["torch_ms"] = bench(lambda: reference(*ins))
            row["resources"] = {k["name"]: k["resources"] for k in module.manifest["kernels"]}
        except Exception as e:  # a failing case must not hide the others
            row["verdict"], row["reason"] = "FAIL", f"{type(e).__name__}: {e}"
        rows.append(row)
        print(f"[emitters {i + 1}/{len(CASES)}] {row['case']} {row['options']}: {row['verdict']} {row['reason']}",
              flush=True)
    rows_out["emitters"] = rows
    table = [f"{'case':20s} {'options':58s} {'verdict':7s} {'norm err':>9s} {'evo ms':>8s} {'torch ms':>9s}"]
    for r in rows:
        err = f"{r['rel_err']:.1e}" if isinstance(r.get("rel_err"), float) else "-"
        evo = f"{r['evo_ms']:.3f}" if "evo_ms" in r else "-"
        tor = f"{r['torch_ms']:.3f}" if "torch_ms" in r else "-"
        table.append(f"{r['case']:20s} {r['options'][:58]:58s} {r['verdict']:7s} {err:>9s} {evo:>8s} {tor:>9s}")
    return [r for r in rows if r["verdict"] != "PASS"], table


# The adversarial suites: every case of each file in its own evo-opt, with the evo-verify options
# of the file's RUN line (the timed-launch suite times its kernels; the other does not).
ADVERSARIAL = [os.path.join(ROOT, "test/Evaluation/verify-adversarial.mlir"),
               os.path.join(ROOT, "test/Evaluation/verify-timing-adversarial.mlir")]


def verify_options(text):
    """The -evo-verify="..." options of a lit file's RUN lines."""
    import re
    run = " ".join(l.split("RUN:", 1)[1].rstrip("\\").strip() for l in text.splitlines() if "RUN:" in l)
    m = re.search(r'-evo-verify="([^"]*)"', run)
    return m.group(1) if m else "timing=false timeout=5"


def run_adversarial(args, rows_out):
    """Each case of the adversarial suites in its own evo-opt, with the verdict, reason and time.
    A false accept is a wrong kernel judged valid; a false reject an honest one judged not valid."""
    import re
    rows = []
    work = tempfile.mkdtemp(prefix="evo-adv-")
    for path in ADVERSARIAL:
        text = open(path).read()
        options = verify_options(text)
        suite = os.path.basename(path)
        cases = text.split("// -----")
        for i, case in enumerate(cases):
            titles = [m.group(1) for m in re.finditer(r"^// ([A-Za-z][A-Za-z0-9 -]*): ", case, re.M)
                      if m.group(1) not in ("RUN", "REQUIRES")]
            name = titles[0] if titles else f"case {i}"
            exp = re.search(r"expected-(error|remark) @\+2 \{\{(.*)\}\}", case)
            want = ("valid" if exp and exp.group(1) == "remark" else "rejected", exp.group(2) if exp else "")
            stem = f"{os.path.splitext(suite)[0]}-{i}"
            mlir = os.path.join(work, stem + ".mlir")
            report = os.path.join(work, stem + ".json")
            open(mlir, "w").write(case)
            t0 = time.time()
            r = subprocess.run([args.evo_opt, mlir, "--evo-emit-ptx=output-dir=-",
                                f"--evo-verify={options} fail-on-invalid=false output={report}",
                                "-o", os.devnull], capture_output=True, text=True)
            seconds = time.time() - t0
            row = {"suite": suite, "case": name, "expected": want[0], "expected_reason": want[1],
                   "seconds": round(seconds, 2)}
            try:
                doc = json.load(open(report))
                res = doc["results"][0]
                row["verdict"], row["reason"], row["seed"] = res["verdict"], res["reason"], doc.get("seed")
                if "timing" in res:
                    row["checked_launches"] = res["timing"].get("checked_launches")
            except Exception as e:
                row["verdict"], row["reason"] = "error", (r.stderr or str(e)).strip()[-300:]
            # "is crashed: <reason>" in an expectation names the verdict, then the reason.
            m = re.match(r"is (\w+)(?:: (.*))?$", want[1])
            wanted_verdict, fragment = (m.group(1), m.group(2) or "") if m else (None, want[1])
            if want[0] == "valid":
                ok = row["verdict"] == "valid"
                row["false_reject"] = not ok
            else:
                ok = row["verdict"] not in ("valid", "error") and (wanted_verdict in (None, row["verdict"])) and \
                    fragment in (row["reason"] or "")
                row["false_accept"] = row["verdict"] == "valid"
            row["ok"] = ok and r.returncode == 0
            rows.append(row)
            print(f"[adversarial {suite} {i + 1}/{len(cases)}] {name}: {row['verdict']} "
                  f"({'as expected' if row['ok'] else 'UNEXPECTED'})", flush=True)
    rows_out["adversarial"] = rows
    false_accepts = sum(1 for r in rows if r.get("false_accept"))
    false_rejects = sum(1 for r in rows if r.get("false_reject"))
    rows_out["adversarial_summary"] = {"cases": len(rows), "false_accepts": false_accepts,
                                       "false_rejects": false_rejects,
                                       "unexpected": sum(1 for r in rows if not r["ok"])}
    table = [f"{'adversarial case':36s} {'verdict':9s} {'s':>5s}  reason"]
    for r in rows:
        table.append(f"{r['case'][:36]:36s} {r['verdict']:9s} {r['seconds']:5.1f}  {(r['reason'] or '-')[:100]}"
                     + ("" if r["ok"] else "   <-- UNEXPECTED"))
    wrong = sum(1 for r in rows if r["expected"] == "rejected")
    table.append(f"false accepts: {false_accepts} of {wrong} wrong kernels; false rejects: {false_rejects} of "
                 f"{len(rows) - wrong} honest kernels")
    return [r for r in rows if not r["ok"]], table


# What the checks of every timed launch cost: evo-verify of a bench task's naive kernels with and
# without them (check-launches=false exists only for this measurement), alternating, `reps` times.
OVERHEAD_TASKS = ["relu", "softmax", "row_sum", "matmul_f32"]


def run_overhead(args, rows_out):
    """Evaluation wall time per candidate (the worker's eval_ms: module load, 5 trials, reload,
    timing) with and without the timed-launch checks, and the medians both ways."""
    rows = []
    work = tempfile.mkdtemp(prefix="evo-overhead-")
    tasks = args.overhead_tasks.split(",") if args.overhead_tasks else OVERHEAD_TASKS
    for name in tasks:
        path = os.path.join(ROOT, "bench", name + ".mlir")
        samples = {True: [], False: []}
        medians = {True: [], False: []}
        timing_wall = {True: [], False: []}
        error = ""
        for rep in range(args.overhead_reps):
            for checks in ((True, False) if rep % 2 == 0 else (False, True)):
                report = os.path.join(work, f"{name}-{rep}-{int(checks)}.json")
                r = subprocess.run([args.evo_opt, path, f"--evo-pipeline=output-dir={work}",
                                    f"--evo-verify=output={report} check-launches={'true' if checks else 'false'}",
                                    "-o", os.devnull], capture_output=True, text=True)
                try:
                    res = json.load(open(report))["results"][0]
                    if res["verdict"] != "valid":
                        error = f"{res['verdict']}: {res['reason']}"
                    samples[checks].append(res["eval_ms"])
                    timing_wall[checks].append(res.get("timing_wall_ms", 0.0))
                    medians[checks].append(res["timing"]["median_ms"])
                except Exception as e:
                    error = (r.stderr or str(e)).strip()[-300:]
        row = {"task": name, "error": error}
        if samples[True] and samples[False]:
            on, off = min(samples[True]), min(samples[False])
            row.update(eval_ms_checks=on, eval_ms_no_checks=off, overhead=(on - off) / off,
                       timing_phase_ms_checks=min(timing_wall[True]), timing_phase_ms_no_checks=min(timing_wall[False]),
                       median_ms_checks=sorted(medians[True])[len(medians[True]) // 2],
                       median_ms_no_checks=sorted(medians[False])[len(medians[False]) // 2],
                       all_eval_ms={"checks": samples[True], "no_checks": samples[False]})
        rows.append(row)
        print(f"[overhead] {name}: {row.get('overhead', float('nan')) * 100:.1f}% {error}", flush=True)
    rows_out["overhead"] = rows
    table = [f"{'overhead (per candidate)':24s} {'eval ms on':>11s} {'eval ms off':>12s} {'overhead':>9s} "
             f"{'timing on':>10s} {'timing off':>11s} {'median on':>10s} {'median off':>11s}"]
    for r in rows:
        if "overhead" not in r:
            table.append(f"{r['task']:24s} error: {r['error'][:100]}")
            continue
        table.append(f"{r['task']:24s} {r['eval_ms_checks']:11.1f} {r['eval_ms_no_checks']:12.1f} "
                     f"{100 * r['overhead']:8.1f}% {r['timing_phase_ms_checks']:10.1f} "
                     f"{r['timing_phase_ms_no_checks']:11.1f} {r['median_ms_checks']:10.4f} {r['median_ms_no_checks']:11.4f}")
    return [r for r in rows if r["error"]], table


VERIFY = [
    ("examples/softmax.mlir", ""),
    ("examples/softmax.mlir", "reduction-strategy=block vector-width=4"),
    ("examples/matmul.mlir", ""),
    ("examples/matmul.mlir", "tile-sizes=64,64,16 thread-tile=4,4"),
    ("examples/bias_gelu.mlir", ""),
    ("examples/bias_gelu.mlir", "vector-width=4"),
    ("examples/row_sum.mlir", ""),
    ("examples/row_sum.mlir", "reduction-strategy=warp vector-width=4 accumulators=2"),
]


def run_verify(args, rows_out):
    """evo-verify with timing on the examples: the verifier's own numbers, and their stability."""
    rows = []
    work = tempfile.mkdtemp(prefix="evo-verify-")
    for i, (path, options) in enumerate(VERIFY):
        report = os.path.join(work, f"v{i}.json")
        opts = "output-dir=" + work + (" " + options if options else "")
        t0 = time.time()
        r = subprocess.run([args.evo_opt, os.path.join(ROOT, path), f"--evo-pipeline={opts}",
                            f"--evo-verify=output={report}", "-o", os.devnull], capture_output=True, text=True)
        row = {"case": os.path.basename(path), "options": options or "(baseline)", "seconds": round(time.time() - t0, 1)}
        try:
            doc = json.load(open(report))
            res = doc["results"][0]
            rows_out["ceilings"] = doc.get("ceilings")
            row.update(verdict=res["verdict"], reason=res["reason"], timing=res.get("timing", {}),
                       roofline=res.get("roofline", {}), trials=res.get("trials", []))
        except Exception as e:
            row.update(verdict="error", reason=(r.stderr or str(e)).strip()[-300:])
        rows.append(row)
        print(f"[verify {i + 1}/{len(VERIFY)}] {row['case']} {row['options']}: {row['verdict']} {row.get('reason', '')}", flush=True)
    rows_out["verify"] = rows
    table = [f"{'evo-verify':16s} {'options':52s} {'verdict':8s} {'median ms':>10s} {'GB/s':>7s} {'%copy':>6s} {'TFLOP/s':>8s} {'spread':>7s}"]
    for r in rows:
        t, rf = r.get("timing", {}), r.get("roofline", {})
        med = f"{t['median_ms']:.4f}" if "median_ms" in t else "-"
        gb = f"{rf['achieved_gbps']:.0f}" if "achieved_gbps" in rf else "-"
        pc = f"{100 * rf['fraction_of_copy']:.0f}%" if "fraction_of_copy" in rf else "-"
        tf = f"{rf['achieved_tflops']:.2f}" if "achieved_tflops" in rf else "-"
        sp = f"{100 * t['repeat_spread']:.1f}%" if "repeat_spread" in t else "-"
        table.append(f"{r['case']:16s} {r['options'][:52]:52s} {r['verdict']:8s} {med:>10s} {gb:>7s} {pc:>6s} {tf:>8s} {sp:>7s}")
    return [r for r in rows if r["verdict"] != "valid"], table


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--evo-opt", default=os.environ.get("EVO_OPT", os.path.join(ROOT, "build/bin/evo-opt")))
    ap.add_argument("--out", default=os.environ.get("OUT", "gpu-out"))
    ap.add_argument("--trials", type=int, default=3)
    ap.add_argument("--seed", type=int, default=1234)
    ap.add_argument("--sections", default="emitters,adversarial,verify")
    ap.add_argument("--overhead-tasks", default="", help="bench tasks for the overhead section (comma-separated)")
    ap.add_argument("--overhead-reps", type=int, default=2)
    ap.add_argument("--determinism-launches", type=int, default=1000)
    ap.add_argument("--determinism-seconds", type=float, default=300)
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    props = torch.cuda.get_device_properties(0)
    print(f"GPU: {props.name}, {props.multi_processor_count} SMs; torch {torch.__version__}; "
          f"evo-opt: {subprocess.run([args.evo_opt, '--version'], capture_output=True, text=True).stdout.strip()}")
    results = {"gpu": props.name, "date": time.strftime("%Y-%m-%d")}
    sections = {"emitters": run_emitters, "adversarial": run_adversarial, "verify": run_verify,
                "overhead": run_overhead, "determinism": run_determinism}
    failures, tables = [], []
    for name in args.sections.split(","):
        f, t = sections[name](args, results)
        failures += f
        tables.append(t)
    with open(os.path.join(args.out, "gpu_check.json"), "w") as f:
        json.dump(results, f, indent=1)
    if results.get("ceilings"):
        c = results["ceilings"]
        if c.get("f16_wgmma_tflops") or c.get("bf16_wgmma_tflops"):
            wgmma = (f"wgmma f16 {c.get('f16_wgmma_tflops', 0):.0f} / "
                     f"bf16 {c.get('bf16_wgmma_tflops', 0):.0f} TFLOP/s")
        else:
            wgmma = f"wgmma {c.get('wgmma_status') or 'not reported'}"
        print(f"\nceilings: copy {c['copy_gbps']:.0f} GB/s, read {c.get('read_gbps', 0):.0f} GB/s, "
              f"write {c.get('write_gbps', 0):.0f} GB/s, FP32 {c['fp32_tflops']:.1f} TFLOP/s, "
              f"f16 mma.sync {c['f16_mma_tflops']:.0f} TFLOP/s, {wgmma} ({c['device']})")
    for t in tables:
        print()
        print("\n".join(t))
    print(f"\n{len(failures)} unexpected results")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
