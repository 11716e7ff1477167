#!/usr/bin/env python3
"""CPU check of the KernelBench-style suite: is each MLIR file the same math as its PyTorch
function in scripts/gpu_kbench.py? No GPU and no evo-opt lowering involved.

For every op: the file's `// cpu-check: A=a B=b ...` line shrinks it (each dimension token A,
also as the float A.0 of a mean's divisor, becomes a), the shrunk function is run by upstream MLIR
on the CPU (softmax decomposed by the transform dialect, named ops generalized, one-shot
bufferization, loops, LLVM, mlir-runner) on inputs made by gpu_kbench's input kinds and embedded as
dense constants, and its result is compared with the PyTorch function in float64 on the same
inputs: |mlir - torch| <= 1e-4 (|torch| + rms(torch)) + 1e-6 (indices exactly). Also checks that
each input kind lies inside the argument's evo.range, where the file declares one.

  /usr/bin/python3 bench/kernelbench/check_cpu.py [--only a,b] [--mlir-bin /usr/lib/llvm-22/bin]

Needs torch (Debian's python3-torch is enough) and MLIR 22's mlir-opt, mlir-runner and runner
libraries. Exits 1 if any op disagrees.
"""

import argparse
import os
import re
import subprocess
import sys
import tempfile

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(HERE)), "scripts"))
import gpu_kbench as kb  # noqa: E402

TRANSFORM = """  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %0 = transform.structured.match ops{["linalg.softmax"]} in %root : (!transform.any_op) -> !transform.any_op
    %1 = transform.structured.decompose_interface %0 : (!transform.any_op) -> !transform.any_op
    transform.yield
  }
"""
PIPELINE = ["-transform-interpreter", "-test-transform-dialect-erase-schedule",
            "-convert-elementwise-to-linalg", "-linalg-generalize-named-ops",
            "-one-shot-bufferize=bufferize-function-boundaries", "-convert-linalg-to-loops",
            "-convert-scf-to-cf", "-expand-strided-metadata", "-lower-affine",
            "-finalize-memref-to-llvm", "-convert-math-to-llvm", "-convert-math-to-libm",
            "-convert-arith-to-llvm", "-convert-func-to-llvm", "-convert-cf-to-llvm",
            "-reconcile-unrealized-casts"]
MLIR_TYPE = {torch.float32: "f32", torch.int64: "i64", torch.bool: "i1"}


def shrink(text):
    """The file with its cpu-check substitutions applied (comment lines dropped)."""
    m = re.search(r"^// cpu-check:(.*)$", text, re.M)
    if not m:
        raise ValueError("no '// cpu-check:' line")
    body = "\n".join(l for l in text.splitlines() if not l.lstrip().startswith("//"))
    pairs = [p.split("=") for p in m.group(1).split()]
    # One pass over all tokens, so that a replacement is never replaced again.
    table = {a: b for a, b in pairs}
    pattern = re.compile(r"(?<![0-9A-Za-wyz_.%#@-])(" + "|".join(sorted(table, key=len, reverse=True)) +
                         r")(?![0-9A-Za-wyz_])")
    return pattern.sub(lambda mm: table[mm.group(1)], body)


def literal(t):
    """A tensor as an MLIR dense literal."""
    def fmt(v):
        if isinstance(v, list):
            return "[" + ", ".join(fmt(x) for x in v) + "]"
        if isinstance(v, bool):
            return "true" if v else "false"
        if isinstance(v, int):
            return str(v)
        f = "%.9g" % v
        return f if any(c in f for c in ".eni") else f + ".0"
    shape = "x".join(str(d) for d in t.shape)
    ty = f"tensor<{shape + 'x' if shape else ''}{MLIR_TYPE[t.dtype]}>"
    return f"dense<{fmt(t.tolist())}> : {ty}", ty


def run_mlir(text, inputs, mlir_bin):
    name, _, outs = kb.signature(text)
    aliases = [l for l in text.splitlines() if l.startswith("#")]
    body = "\n".join(l for l in text.splitlines() if not l.startswith("#"))
    # evo.range is evo's; the upstream tools need not know it.
    body = re.sub(r"\s*\{evo\.range = \[[^\]]*\]\}", "", body)
    main = ["func.func @main() {"]
    args, types = [], []
    for i, t in enumerate(inputs):
        lit, ty = literal(t)
        main.append(f"  %a{i} = arith.constant {lit}")
        args.append(f"%a{i}")
        types.append(ty)
    (oshape, otype), = outs
    oty = f"tensor<{''.join(f'{d}x' for d in oshape)}{otype}>"
    printer = {"f32": "printMemrefF32", "i64": "printMemrefI64"}[otype]
    main += [f"  %r = call @{name}({', '.join(args)}) : ({', '.join(types)}) -> {oty}",
             f"  %u = tensor.cast %r : {oty} to tensor<*x{otype}>",
             f"  call @{printer}(%u) : (tensor<*x{otype}>) -> ()", "  return", "}",
             f"func.func private @{printer}(tensor<*x{otype}>)"]
    module = "\n".join(aliases + ["module attributes {transform.with_named_sequence} {", body,
                                  "\n".join(main), TRANSFORM, "}"])
    with tempfile.TemporaryDirectory() as d:
        src, llvm = os.path.join(d, "in.mlir"), os.path.join(d, "llvm.mlir")
        open(src, "w").write(module)
        r = subprocess.run([os.path.join(mlir_bin, "mlir-opt"), src, *PIPELINE, "-o", llvm],
                           capture_output=True, text=True)
        if r.returncode:
            raise RuntimeError("mlir-opt: " + r.stderr.strip()[:600])
        libdir = os.path.join(os.path.dirname(mlir_bin), "lib")
        libs = ",".join(os.path.join(libdir, f"libmlir_{l}runner_utils.so") for l in ("", "c_"))
        r = subprocess.run([os.path.join(mlir_bin, "mlir-runner"), llvm, "-e", "main",
                            "-entry-point-result=void", f"-shared-libs={libs}"],
                           capture_output=True, text=True, timeout=600)
        if r.returncode:
            raise RuntimeError("mlir-runner: " + r.stderr.strip()[:600])
    data = r.stdout.split("data =", 1)[1]
    nums = re.findall(r"-?(?:nan|inf|\d+(?:\.\d*)?(?:e[-+]?\d+)?)", data)
    return torch.tensor([float(x) for x in nums], dtype=torch.float64).reshape(oshape)


def check(name, mlir_bin):
    text = shrink(open(kb.mlir_path(name)).read())
    _, sig, _ = kb.signature(text)
    spec = kb.OPS[name]
    for kind, (_, _, declared) in zip(spec["inputs"] or ["randn"] * len(sig), sig):
        kr = (0, sig[0][0][-1] - 1) if kind == "classes" else kb.kind_range(kind)
        if declared and (kr is None or kr[0] < declared[0] or kr[1] > declared[1]):
            return f"input kind {kind} is not inside the declared evo.range {list(declared)}"
    inputs = kb.make_inputs(name, "cpu", seed=1, text=text)
    # The dense literal is what both sides see: round-trip the floats through its text.
    inputs = [torch.tensor([float("%.9g" % v) for v in t.flatten().tolist()], dtype=t.dtype).reshape(t.shape)
              if t.is_floating_point() else t for t in inputs]
    ref = spec["fn"](*[t.double() if t.is_floating_point() else t for t in inputs])
    ref = ref.double() if ref.is_floating_point() else ref
    got = run_mlir(text, inputs, mlir_bin)
    if tuple(ref.shape) != tuple(got.shape):
        return f"shape {tuple(got.shape)} but PyTorch gives {tuple(ref.shape)}"
    if not ref.is_floating_point():
        bad = (got != ref.double()).sum().item()
        return f"{bad} of {ref.numel()} indices differ" if bad else None
    rms = ref.pow(2).mean().sqrt().item()
    err = (got - ref).abs()
    tol = 1e-4 * (ref.abs() + rms) + 1e-6
    bad = (err > tol) | (got.isnan() != ref.isnan())
    if bad.any():
        i = int(bad.flatten().nonzero()[0])
        return (f"{int(bad.sum())} of {ref.numel()} elements differ, first at {i}: "
                f"{got.flatten()[i].item():.7g} vs {ref.flatten()[i].item():.7g}")
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", default="")
    ap.add_argument("--mlir-bin", default="/usr/lib/llvm-22/bin")
    a = ap.parse_args()
    names = [n for n in kb.OPS if not a.only or n in a.only.split(",")]
    failed = 0
    for name in names:
        try:
            why = check(name, a.mlir_bin)
        except Exception as e:
            why = f"error: {e}"
        failed += why is not None
        print(f"{name:26s} {'ok' if why is None else 'MISMATCH: ' + why}", flush=True)
    print(f"\n{len(names) - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
