#!/usr/bin/env python3
"""A GPT-2-small-class transformer layer end to end (issue 16, item 4; docs/bench.md,
"Transformer block"): examples/gpt2_block.mlir (f32) and examples/gpt2_block_f16.mlir (f16 with
f32 accumulation) are evolved with the built-in search (no LLM), emitted as PTX + manifest, loaded
with python/evo_runtime and run on random weights (seeded); the same weights go into a PyTorch
nn.Module of the same math, and the outputs are compared (with a float64 reference of the math
as the judge of both). Then evo's emitted block (do_bench over EvoModule calls with preallocated
outputs and workspace) is timed against PyTorch eager and torch.compile of the module, in the
same process. Called by scripts/gpu-check (section "transformer"); prints a table, writes
$OUT/transformer.json (after every step, so a run cut short keeps what it measured).

    python3 scripts/gpu_transformer.py [--only f32,f16] [--seq 1024] [--candidates 12] [--seconds 3]
    python3 scripts/gpu_transformer.py --check-cpu     # no GPU, no torch: the parts that can run here

PyTorch's module is timed in two forms: "sdpa" (attention by F.scaled_dot_product_attention with
is_causal=True: flash attention, what nanoGPT and current HF GPT-2 use) and "math" (the explicit
q k^T / 8, masked_fill, softmax, p v of HF's eager GPT-2 attention, the same ops as the MLIR).
PyTorch's f32 matmuls run without TF32 (as scripts/gpu_bench.py), so both sides compute in f32.

Weights are stored [in, out] (GPT-2's Conv1D: y = x @ W + b), the layout of the MLIR arguments,
so the same tensors go to both sides unchanged.
"""

import argparse
import json
import math
import os
import re
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
sys.path.insert(0, os.path.join(ROOT, "python"))
import bench_common  # noqa: E402  (evolve + verify, PyTorch timing: shared with gpu_bench.py)

D, H, DH, F = 768, 12, 64, 3072
EXAMPLE_SEQ = 1024  # the S the example files are written with
EXAMPLES = {"f32": "gpt2_block.mlir", "f16": "gpt2_block_f16.mlir"}
EPS = 1e-5
DEVICE = "cuda"  # where the run happens (a CPU stand-in may change it when testing the harness)
# Pass when evo's max abs error against the float64 reference is within this, or within
# ERR_FACTOR times PyTorch's own error in the same dtype (whichever is larger).
TOLERANCE = {"f32": 2e-3, "f16": 5e-2}
ERR_FACTOR = 4.0


def arg_specs(seq):
    """The MLIR function's arguments in order: (name, shape, init) with init the weight
    distribution: ('x',) activations N(0, 1); ('gamma',) 1 + 0.1 N(0, 1); ('beta'/'bias',)
    0.1 N(0, 1) / 0.02 N(0, 1); ('w', fan_in) N(0, 1/fan_in), so scores and the GELU's input have
    unit variance (the nonlinearities matter, unlike GPT-2's 0.02 init at this width)."""
    return [
        ("x", (seq, D), ("x",)),
        ("ln1_g", (D,), ("gamma",)), ("ln1_b", (D,), ("beta",)),
        ("w_qkv", (D, 3 * D), ("w", D)), ("b_qkv", (3 * D,), ("bias",)),
        ("w_o", (D, D), ("w", D)), ("b_o", (D,), ("bias",)),
        ("ln2_g", (D,), ("gamma",)), ("ln2_b", (D,), ("beta",)),
        ("w_fc", (D, F), ("w", D)), ("b_fc", (F,), ("bias",)),
        ("w_proj", (F, D), ("w", F)), ("b_proj", (D,), ("bias",)),
    ]


def mlir_signature(text):
    """[(name, shape, dtype)] of @gpt2_block's arguments and its result type, parsed from the text."""
    m = re.search(r"func\.func @gpt2_block\((.*?)\)\s*->\s*tensor<([^>]*)>", text, re.S)
    if not m:
        raise ValueError("no func.func @gpt2_block(...) -> tensor<...> in the source")
    args = []
    for name, ty in re.findall(r"%(\w+)\s*:\s*tensor<([^>]*)>", m.group(1)):
        *dims, dt = ty.split("x")
        args.append((name, tuple(int(d) for d in dims), dt))
    *rdims, rdt = m.group(2).split("x")
    return args, (tuple(int(d) for d in rdims), rdt)


def source(dtype, seq, work):
    """The example for `dtype` with sequence length `seq`: the file itself for S = 1024, else a
    copy in `work` with S substituted (1024 appears in the examples only as S). The signature is
    checked against arg_specs, so the inputs built here are the function's."""
    path = os.path.join(ROOT, "examples", EXAMPLES[dtype])
    text = open(path).read()
    if seq != EXAMPLE_SEQ:
        if seq < 1 or seq in (D, 3 * D, F, H, DH):
            raise ValueError(f"--seq {seq}: must be positive and differ from the model's other sizes")
        text = re.sub(r"(?<![0-9.])%d(?![0-9])" % EXAMPLE_SEQ, str(seq), text)
        path = os.path.join(work, f"gpt2_block_{dtype}_s{seq}.mlir")
        with open(path, "w") as f:
            f.write(text)
    args, (rshape, rdt) = mlir_signature(text)
    want = [(n, s) for n, s, _ in arg_specs(seq)]
    if [(n, s) for n, s, _ in args] != want or any(dt != dtype for _, _, dt in args):
        raise ValueError(f"{path}: arguments {args} are not {want} in {dtype}")
    if rshape != (seq, D) or rdt != dtype:
        raise ValueError(f"{path}: result tensor<{rshape} x {rdt}>, expected ({seq}, {D}) x {dtype}")
    return path


def check_manifest(manifest_path, dtype, seq):
    """The manifest's inputs and output are the function's (order, shapes, dtypes)."""
    m = json.load(open(manifest_path))
    ins = [b for b in m["buffers"] if b["role"] == "input"]
    outs = [b for b in m["buffers"] if b["role"] == "output"]
    got = [(tuple(b["shape"]), b["dtype"]) for b in ins]
    want = [(s, dtype) for _, s, _ in arg_specs(seq)]
    if got != want:
        raise ValueError(f"{manifest_path}: inputs {got}, expected {want}")
    if [(tuple(b["shape"]), b["dtype"]) for b in outs] != [((seq, D), dtype)]:
        raise ValueError(f"{manifest_path}: outputs {outs}")
    return {"kernels": len(m.get("kernels", [])), "launches": len(m.get("launches", [])),
            "tasks": [(t.get("name"), t.get("family")) for t in m.get("tasks", [])]}


# ---------------------------------------------------------------------------------------------
# PyTorch side (imported lazily: --check-cpu needs no torch)

def make_weights(seq, seed):
    """The inputs as float64 CPU tensors (the master copy; each side gets them cast to its dtype)."""
    import torch
    g = torch.Generator().manual_seed(seed)
    out = {}
    for name, shape, init in arg_specs(seq):
        r = torch.randn(shape, generator=g, dtype=torch.float64)
        kind = init[0]
        if kind == "gamma":
            r = 1 + 0.1 * r
        elif kind == "beta":
            r = 0.1 * r
        elif kind == "bias":
            r = 0.02 * r
        elif kind == "w":
            r = r / math.sqrt(init[1])
        out[name] = r
    return out


def make_module(params, attention):
    """The layer as an nn.Module holding `params` (a dict of tensors, one dtype, on the GPU):
    attention 'sdpa' (F.scaled_dot_product_attention, causal) or 'math' (HF GPT-2's eager form)."""
    import torch
    import torch.nn.functional as Fn
    from torch import nn

    class GPT2Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln_1 = nn.LayerNorm(D, eps=EPS)
            self.ln_2 = nn.LayerNorm(D, eps=EPS)
            dev, dt = params["x"].device, params["x"].dtype
            self.to(device=dev, dtype=dt)
            with torch.no_grad():
                self.ln_1.weight.copy_(params["ln1_g"])
                self.ln_1.bias.copy_(params["ln1_b"])
                self.ln_2.weight.copy_(params["ln2_g"])
                self.ln_2.bias.copy_(params["ln2_b"])
            for n in ("w_qkv", "b_qkv", "w_o", "b_o", "w_fc", "b_fc", "w_proj", "b_proj"):
                setattr(self, n, nn.Parameter(params[n].clone(), requires_grad=False))
            s = params["x"].shape[0]
            self.register_buffer("causal", torch.ones(s, s, dtype=torch.bool, device=dev).tril(),
                                 persistent=False)
            self.requires_grad_(False)  # inference: no autograd graph in the timed calls

        def attn(self, h):
            s = h.shape[0]
            qkv = h @ self.w_qkv + self.b_qkv
            q, k, v = qkv.split(D, dim=-1)
            q, k, v = (t.view(s, H, DH).transpose(0, 1) for t in (q, k, v))  # [H, S, 64]
            if attention == "sdpa":
                y = Fn.scaled_dot_product_attention(q.unsqueeze(0), k.unsqueeze(0), v.unsqueeze(0),
                                                    is_causal=True).squeeze(0)
            else:
                att = (q @ k.transpose(-2, -1)) / math.sqrt(DH)
                att = att.masked_fill(~self.causal, torch.finfo(att.dtype).min)
                att = torch.softmax(att, dim=-1)
                y = att @ v
            y = y.transpose(0, 1).reshape(s, D)
            return y @ self.w_o + self.b_o

        def forward(self, x):
            x = x + self.attn(self.ln_1(x))
            m = Fn.gelu(self.ln_2(x) @ self.w_fc + self.b_fc, approximate="tanh")
            return x + m @ self.w_proj + self.b_proj

    return GPT2Block().eval()


def reference(master, device):
    """The layer in float64 (math attention), the judge of both sides."""
    import torch
    p = {k: v.to(device) for k, v in master.items()}
    with torch.no_grad():
        return make_module(p, "math")(p["x"]).double()


def errors(out, ref):
    """Max and mean abs difference, the max relative to the reference's largest magnitude, and
    the count of NaN/inf elements of `out`."""
    import torch
    d = (out.double() - ref).abs()
    return {"max_abs": d.max().item(), "mean_abs": d.mean().item(),
            "max_rel": (d.max() / ref.abs().max()).item(),
            "nonfinite": int((~torch.isfinite(out)).sum().item())}


def embedded_source(src, params, dtype, work):
    """The example with every weight (all arguments but x) written into it as a dense_resource
    constant holding `params`' values, the way torch-mlir exports a module's parameters: the
    function takes x alone, and the weights reach the kernels as constant buffers."""
    text = open(src).read()
    m = re.search(r"(func\.func @gpt2_block\()(.*?)(\)\s*->\s*tensor<[^>]*>\s*\{)", text, re.S)
    names = [n for n, _, _ in arg_specs(0)][1:]
    decls = []
    blobs = []
    for n in names:
        t = params[n].cpu().contiguous()
        shape = "x".join(str(d) for d in t.shape)
        decls.append(f"  %{n} = arith.constant dense_resource<gpt2_{n}> : tensor<{shape}x{dtype}>")
        blobs.append(f'      gpt2_{n}: "0x{t.element_size().to_bytes(4, "little").hex()}'
                     f'{t.numpy().tobytes().hex()}"')
    x_arg = re.match(r"\s*(%x\s*:\s*tensor<[^>]*>)", m.group(2)).group(1)
    text = (text[:m.start()] + m.group(1) + x_arg + m.group(3) + "\n" + "\n".join(decls)
            + text[m.end():])
    text += "\n{-#\n  dialect_resources: {\n    builtin: {\n" + ",\n".join(blobs) + "\n    }\n  }\n#-}\n"
    path = os.path.join(work, f"gpt2_block_{dtype}_embedded.mlir")
    with open(path, "w") as f:
        f.write(text)
    return path


def embedded_check(args, src, dtype, params, evo_out, work, row):
    """The block with its weights inside the module (embedded_source), lowered with every
    constant a constant buffer (inline-constant-bytes=0) and the evolved run's tuning records
    (the same kernels), emitted with <name>.constants.bin, and called with x alone: its output
    must be the argument version's, bit for bit."""
    import torch
    from triton.testing import do_bench
    from evo_runtime import EvoModule
    path = embedded_source(src, params, dtype, work)
    out_dir = os.path.join(work, "ptx", f"gpt2_block_{dtype}_embedded")
    tuning = os.path.join(work, "runs", f"gpt2_block_{dtype}", "tuning.json")
    opts = f"output-dir={out_dir} chip={args.chip} inline-constant-bytes=0"
    if row.get("kernels_from") == "evolved" and os.path.exists(tuning):
        opts += f" tuning-db={tuning}"
    r = subprocess.run([args.evo_opt, path, f"--evo-pipeline={opts}", "-o", os.devnull],
                       capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError("evo-pipeline (embedded weights) failed: " + bench_common.first_error(r.stderr))
    applied = re.search(r": (\d+) of (\d+) tasks lowered with a record", r.stderr)
    mod = EvoModule(os.path.join(out_dir, "gpt2_block.json"))
    spec = mod.spec
    if [tuple(b.shape) for b in spec.inputs] != [(args.seq, D)]:
        raise ValueError(f"embedded: inputs {[b.shape for b in spec.inputs]}, expected x alone")
    x = params["x"]
    outs, ws = mod.allocate_outputs(), mod.allocate_workspace()
    (out,) = mod(x, outputs=outs, workspace=ws)
    torch.cuda.synchronize()
    row["embedded"] = {
        "constants": len(spec.constants),
        "constants_bytes": sum(c.bytes for c in spec.constants),
        "tuning_applied": applied.group(0) if applied else None,
        "bitwise_equal": bool(torch.equal(out, evo_out)),
        "max_abs_diff": float((out.double() - evo_out.double()).abs().max()),
        "loader_ms": do_bench(lambda: mod(x, outputs=outs, workspace=ws), warmup=25, rep=200,
                              return_mode="median"),
    }
    print(f"[transformer] {dtype}: embedded weights: {row['embedded']}", flush=True)


def emit_naive(evo, src, out_dir, chip):
    """The naive lowering's PTX (no search): the fallback when evolving fails, so the comparison
    still runs (labelled 'naive')."""
    r = subprocess.run([evo, src, f"--evo-pipeline=output-dir={out_dir} chip={chip}", "-o", os.devnull],
                       capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError("evo-pipeline failed: " + bench_common.first_error(r.stderr))


def run_dtype(dtype, args, work, save, row):
    import torch
    from triton.testing import do_bench
    from evo_runtime import EvoModule
    tdt = {"f32": torch.float32, "f16": torch.float16}[dtype]
    src = source(dtype, args.seq, work)
    name = f"gpt2_block_{dtype}"
    row["source"] = os.path.relpath(src, ROOT) if src.startswith(ROOT) else src
    row["seq"] = args.seq

    # 1. evolve (built-in search), emit, evo-verify the evolved module end to end.
    if args.no_evolve:
        row["evolve"] = "skipped (--no-evolve)"
    else:
        extra = f"run-time-budget={args.run_seconds}" if args.run_seconds else ""
        row.update(bench_common.evolve(args.evo_opt, src, name, work, args.candidates, args.seconds,
                                       args.chip, extra))
        print(f"[transformer] {dtype}: evolve rc={row.get('evolve_rc')} in {row.get('evolve_s')} s, "
              f"{row.get('evaluated')} candidates ({row.get('valid')} valid), verify "
              f"{row.get('verify')}, baseline {row.get('baseline_ms')} ms, evolved "
              f"{row.get('evolved_ms')} ms", flush=True)
        if "error" in row:
            print(row["error"], flush=True)
        save()
    ptx_dir = os.path.join(work, "ptx", name)
    manifest = os.path.join(ptx_dir, "gpt2_block.json")
    row["kernels_from"] = "evolved"
    if args.no_evolve or row.get("evolve_rc") != 0 or not os.path.exists(manifest):
        ptx_dir = os.path.join(work, "ptx", name + "_naive")
        manifest = os.path.join(ptx_dir, "gpt2_block.json")
        emit_naive(args.evo_opt, src, ptx_dir, args.chip)
        row["kernels_from"] = "naive"
    row["manifest"] = check_manifest(manifest, dtype, args.seq)

    # 2. the same weights on both sides; a float64 reference judges both.
    master = make_weights(args.seq, args.seed)
    ref = reference(master, DEVICE)
    params = {k: v.to(device=DEVICE, dtype=tdt).contiguous() for k, v in master.items()}
    ins = [params[n] for n, _, _ in arg_specs(args.seq)]
    mod = EvoModule(manifest)
    outs, ws = mod.allocate_outputs(), mod.allocate_workspace()
    (evo_out,) = mod(*ins, outputs=outs, workspace=ws)
    torch.cuda.synchronize()
    row["evo_vs_ref64"] = errors(evo_out, ref)
    modules = {a: make_module(params, a) for a in args.attention.split(",")}
    with torch.no_grad():
        for a, m in modules.items():
            t_out = m(params["x"])
            row[f"torch_{a}_vs_ref64"] = errors(t_out, ref)
            row[f"evo_vs_torch_{a}"] = errors(evo_out, t_out.double())
    torch_err = min(row[f"torch_{a}_vs_ref64"]["max_abs"] for a in modules)
    limit = max(TOLERANCE[dtype], ERR_FACTOR * torch_err)
    e = row["evo_vs_ref64"]
    row["tolerance"] = limit
    row["correct"] = bool(e["nonfinite"] == 0 and e["max_abs"] <= limit)
    print(f"[transformer] {dtype}: evo vs float64 max abs {e['max_abs']:.3e} (rel {e['max_rel']:.3e}), "
          f"PyTorch {dtype} vs float64 max abs {torch_err:.3e}; tolerance {limit:.3e}: "
          f"{'PASS' if row['correct'] else 'FAIL'}", flush=True)
    del ref
    save()
    try:
        embedded_check(args, src, dtype, params, evo_out, work, row)
    except Exception as ex:  # the comparison below still runs
        row["embedded"] = {"error": f"{type(ex).__name__}: {ex}"}
        print(f"[transformer] {dtype}: embedded weights failed: {row['embedded']['error']}", flush=True)
    save()

    # 3. time: evo's block through the loader, PyTorch eager and torch.compile, same harness.
    row["evo_loader_ms"] = do_bench(lambda: mod(*ins, outputs=outs, workspace=ws), warmup=25,
                                    rep=200, return_mode="median")
    save()
    for a, m in modules.items():
        with torch.no_grad():
            row[f"eager_{a}_ms"], row[f"compile_{a}_ms"] = bench_common.time_torch(m, [params["x"]])
        print(f"[transformer] {dtype}: torch {a}: eager {row[f'eager_{a}_ms']:.3f} ms, "
              f"compile {row[f'compile_{a}_ms']:.3f} ms", flush=True)
        save()
    del mod, outs, ws, modules, params, ins
    torch.cuda.empty_cache()


def table(rows, attentions):
    fmt = lambda x, p=3: f"{x:.{p}f}" if isinstance(x, (int, float)) and x == x else "-"
    cols = [f"{k}_{a}" for a in attentions for k in ("eager", "compile")]
    print(f"\n{'dtype':5s} {'kernels':8s} {'tasks':>5s} {'max abs err':>11s} {'torch err':>10s} "
          f"{'ok':>4s} {'evo ms':>8s} {'verify ms':>9s} " + " ".join(f"{c:>14s}" for c in cols)
          + f" {'best torch/evo':>14s}")
    for dtype, r in rows.items():
        if "harness_error" in r and "evo_vs_ref64" not in r:
            print(f"{dtype:5s} harness failed: {r['harness_error'][:200]}")
            continue
        e = r.get("evo_vs_ref64", {}).get("max_abs")
        te = min((r[k]["max_abs"] for k in r if k.startswith("torch_") and k.endswith("_vs_ref64")),
                 default=None)
        times = [r.get(c + "_ms") for c in cols]
        best = min((t for t in times if isinstance(t, float) and t == t), default=None)
        ev = r.get("evo_loader_ms")
        print(f"{dtype:5s} {r.get('kernels_from', '-'):8s} {len(r.get('manifest', {}).get('tasks', [])):>5d} "
              f"{'-' if e is None else f'{e:.3e}':>11s} {'-' if te is None else f'{te:.3e}':>10s} "
              f"{'yes' if r.get('correct') else 'NO':>4s} {fmt(ev):>8s} {fmt(r.get('evolved_ms')):>9s} "
              + " ".join(f"{fmt(t):>14s}" for t in times)
              + f" {fmt(best / ev if best and ev else None, 2):>14s}")
    print("evo ms: the emitted block through python/evo_runtime (do_bench, as PyTorch's times); "
          "verify ms: evo-verify's time of the evolved module; best torch/evo > 1: evo is faster")


def check_cpu(args):
    """What runs without a GPU or torch: the sources' signatures, S substitution, the naive
    lowering through --evo-pipeline for the chip, and the manifests against the inputs built."""
    work = tempfile.mkdtemp(prefix="evo-transformer-cpu-")
    ok = True
    for dtype in EXAMPLES:
        for seq in (EXAMPLE_SEQ, 128):
            try:
                src = source(dtype, seq, work)
                out = os.path.join(work, f"{dtype}_s{seq}")
                emit_naive(args.evo_opt, src, out, args.chip or "sm_90a")
                info = check_manifest(os.path.join(out, "gpt2_block.json"), dtype, seq)
                print(f"check-cpu: {dtype} S={seq}: {info['kernels']} kernels, tasks "
                      f"{[f for _, f in info['tasks']]}")
            except Exception as e:
                ok = False
                print(f"check-cpu: {dtype} S={seq}: FAILED: {e}")
    return 0 if ok else 1


def check_cpu_math(args):
    """No GPU: is examples/gpt2_block.mlir the same math as make_module's PyTorch layer? The f32
    file is shrunk (S 1024 -> 16, 12 heads -> 2 of the same 64, D 768 -> 128, MLP 3072 -> 512),
    run by upstream MLIR on the CPU (bench/kernelbench/check_cpu.py's pipeline: softmax
    decomposed, bufferized, loops, LLVM, mlir-runner) on seeded inputs embedded as dense
    constants, and compared with the module ('math' attention) in float64. Needs torch (Debian's
    python3-torch: /usr/bin/python3) and MLIR 22's mlir-opt and mlir-runner. The f16 file is the
    same program with extf/truncf around it (and no f16 printer upstream), so it is not run."""
    import torch
    sys.path.insert(0, os.path.join(ROOT, "bench", "kernelbench"))
    import check_cpu as cc
    global D, H, F
    sizes = {"1024": "16", "768": "128", "2304": "384", "1536": "256", "3072": "512", "12": "2"}
    text = open(os.path.join(ROOT, "examples", EXAMPLES["f32"])).read()
    text = "\n".join(l for l in text.splitlines() if not l.lstrip().startswith("//"))
    text = text.replace("7.680000e+02", "1.280000e+02")
    text = re.sub(r"(?<![0-9A-Za-wyz_.%#@-])(1024|768|2304|1536|3072|12)(?![0-9A-Za-wyz_.])",
                  lambda m: sizes[m.group(1)], text)
    D, H, F = 128, 2, 512
    seq = 16
    master = make_weights(seq, args.seed)
    # The dense literal is what both sides see: round the inputs to f32 (as the literal's text).
    inputs = [master[n].float() for n, _, _ in arg_specs(seq)]
    with torch.no_grad():
        ref = make_module({k: v.double() for k, v in zip([n for n, _, _ in arg_specs(seq)], inputs)},
                          "math")(inputs[0].double())
    aliases = [l for l in text.splitlines() if l.startswith("#")]
    body = "\n".join(l for l in text.splitlines() if not l.startswith("#"))
    main = ["func.func @main() {"]
    names, types = [], []
    for i, t in enumerate(inputs):
        lit, ty = cc.literal(t)
        main.append(f"  %a{i} = arith.constant {lit}")
        names.append(f"%a{i}")
        types.append(ty)
    oty = f"tensor<{seq}x{D}xf32>"
    main += [f"  %r = call @gpt2_block({', '.join(names)}) : ({', '.join(types)}) -> {oty}",
             f"  %u = tensor.cast %r : {oty} to tensor<*xf32>",
             "  call @printMemrefF32(%u) : (tensor<*xf32>) -> ()", "  return", "}",
             "func.func private @printMemrefF32(tensor<*xf32>)"]
    module = "\n".join(aliases + ["module attributes {transform.with_named_sequence} {", body,
                                  "\n".join(main), cc.TRANSFORM, "}"])
    with tempfile.TemporaryDirectory() as d:
        src, llvm = os.path.join(d, "in.mlir"), os.path.join(d, "llvm.mlir")
        open(src, "w").write(module)
        r = subprocess.run([os.path.join(args.mlir_bin, "mlir-opt"), src, *cc.PIPELINE, "-o", llvm],
                           capture_output=True, text=True)
        if r.returncode:
            print("check-cpu-math: mlir-opt failed: " + r.stderr.strip()[:1500])
            return 1
        libdir = os.path.join(os.path.dirname(args.mlir_bin), "lib")
        libs = ",".join(os.path.join(libdir, f"libmlir_{l}runner_utils.so") for l in ("", "c_"))
        r = subprocess.run([os.path.join(args.mlir_bin, "mlir-runner"), llvm, "-e", "main",
                            "-entry-point-result=void", f"-shared-libs={libs}"],
                           capture_output=True, text=True, timeout=600)
        if r.returncode:
            print("check-cpu-math: mlir-runner failed: " + r.stderr.strip()[:1500])
            return 1
    data = r.stdout.split("data =", 1)[1]
    nums = re.findall(r"-?(?:nan|inf|\d+(?:\.\d*)?(?:e[-+]?\d+)?)", data)
    got = torch.tensor([float(x) for x in nums], dtype=torch.float64).reshape(seq, D)
    e = errors(got, ref)
    ok = e["nonfinite"] == 0 and e["max_abs"] <= 1e-4 * max(1.0, ref.abs().max().item())
    print(f"check-cpu-math: examples/{EXAMPLES['f32']} shrunk to S={seq}, {H} heads, D={D}, "
          f"MLP {F}, run by mlir-runner, against the PyTorch module in float64: max abs "
          f"{e['max_abs']:.3e} (output range {ref.abs().max().item():.3f}): {'ok' if ok else 'MISMATCH'}")
    return 0 if ok else 1


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--evo-opt", default=os.environ.get("EVO_OPT", os.path.join(ROOT, "build/bin/evo-opt")))
    ap.add_argument("--out", default=os.environ.get("OUT", "gpu-out"))
    ap.add_argument("--only", default="f32,f16", help="comma-separated dtypes: f32, f16")
    ap.add_argument("--seq", type=int, default=EXAMPLE_SEQ, help="sequence length S (batch 1)")
    ap.add_argument("--candidates", type=int, default=12, help="evolve: max-candidates per task")
    ap.add_argument("--seconds", type=float, default=3, help="evolve: time-budget per task")
    ap.add_argument("--run-seconds", type=float, default=0,
                    help="evolve: run-time-budget for all tasks of one dtype (0: none)")
    ap.add_argument("--chip", default="", help="PTX target (default: sm_90a on compute capability "
                                               "9.0, else sm_90)")
    ap.add_argument("--seed", type=int, default=0, help="weights and input")
    ap.add_argument("--attention", default="sdpa,math",
                    help="PyTorch attention forms to time: sdpa, math (comma-separated)")
    ap.add_argument("--no-evolve", action="store_true", help="the naive lowering only (no search)")
    ap.add_argument("--check-cpu", action="store_true",
                    help="no GPU: check the sources, the lowering and the manifests only")
    ap.add_argument("--check-cpu-math", action="store_true",
                    help="no GPU: run the shrunk f32 example with upstream MLIR on the CPU and "
                         "compare with the PyTorch module (needs torch: /usr/bin/python3)")
    ap.add_argument("--mlir-bin", default="/usr/lib/llvm-22/bin", help="for --check-cpu-math")
    args = ap.parse_args()
    if args.check_cpu:
        return check_cpu(args)
    if args.check_cpu_math:
        return check_cpu_math(args)

    import torch
    if not args.chip:
        args.chip = "sm_90a" if torch.cuda.get_device_capability(0) == (9, 0) else "sm_90"
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    os.makedirs(args.out, exist_ok=True)
    work = tempfile.mkdtemp(prefix="evo-transformer-")
    rows = {}
    meta = {"date": time.strftime("%Y-%m-%d"), "gpu": torch.cuda.get_device_name(0),
            "torch": torch.__version__, "chip": args.chip, "seq": args.seq,
            "candidates": args.candidates, "seconds": args.seconds, "seed": args.seed}

    def save():
        with open(os.path.join(args.out, "transformer.json"), "w") as f:
            json.dump(dict(meta, rows=rows), f, indent=1)

    rc = 0
    for dtype in [d for d in args.only.split(",") if d]:
        if dtype not in EXAMPLES:
            print(f"[transformer] unknown dtype '{dtype}' (f32, f16)", flush=True)
            rc = 1
            continue
        rows[dtype] = {}
        t0 = time.time()
        try:
            run_dtype(dtype, args, work, save, rows[dtype])
        except Exception as e:  # recorded; the other dtype still runs
            import traceback
            traceback.print_exc()
            rows[dtype]["harness_error"] = f"{type(e).__name__}: {e}"[:1000]
        rows[dtype]["total_s"] = round(time.time() - t0, 1)
        if not rows[dtype].get("correct"):
            rc = 1
        save()
    table(rows, args.attention.split(","))
    save()
    return rc


if __name__ == "__main__":
    sys.exit(main())
