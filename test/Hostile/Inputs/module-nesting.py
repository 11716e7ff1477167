"""Writes the deeply nested inputs of module-nesting.test into DIR."""
import os
import sys

out = sys.argv[1]


def write(name, text):
    with open(os.path.join(out, name), "w") as f:
        f.write(text)


def regions(n):
    return ("func.func @f() {\n" + "scf.execute_region {\n" * n + "scf.yield }\n" * n +
            "return }\n")


for n in (999, 8000, 100000):
    write("regions-%d.mlir" % n, regions(n))
n = 100000
write("arrays-100000.mlir",
      'func.func @f() attributes {a = ' + "[" * n + "]" * n + "} { return }\n")
write("types-100000.mlir",
      "func.func private @f(" + "tuple<" * n + "i32" + ">" * n + ")\n")
# 5000 '{' in a string and a comment, around a normal function.
write("strings.mlir",
      "// " + "{" * 5000 + "\n" +
      'func.func @f() attributes {s = "' + "{" * 5000 + '\\"' + "(" * 5000 + '"} { return }\n')
