"""Prints the image evo_runtime chooses, for each compute capability given, from a manifest made
with chips= (every file checked against the manifest first). Used by test/Target/emit-ptx-chips.mlir.

    choose_image.py <manifest.json> 9.0 8.6 ...
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "python"))
import evo_runtime  # noqa: E402

m = evo_runtime.Manifest.load(sys.argv[1])
m.read_image()
ELF = b"\x7fELF"
for b, data in zip(m.binaries, m.read_binaries()):
    print(f"{b.chip}: {b.file} {len(data)} bytes, ELF {data.startswith(ELF)}")
for cc in sys.argv[2:]:
    major, minor = (int(x) for x in cc.split("."))
    try:
        binary, ptx = m.image_for(major, minor)
        print(f"sm_{major}{minor}: " + (f"cubin {binary.chip} {binary.file}" if binary
                                        else f"ptx {m.chip} {ptx}"))
    except evo_runtime.UnsupportedDeviceError as e:
        print(f"sm_{major}{minor}: {e}")
