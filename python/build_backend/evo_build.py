"""A PEP 517 / PEP 660 build backend for evo-runtime, in the source tree (pyproject.toml's
backend-path), so that `pip install ./python` needs nothing but pip: no setuptools, no wheel, no
package index. evo_runtime is pure Python; a wheel is a zip of its files plus the metadata of
pyproject.toml's [project] table (the keys used there: name, version, description, readme,
requires-python, optional-dependencies).
"""

import base64
import hashlib
import io
import os
import re
import tarfile
import zipfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKAGE = "evo_runtime"
_EPOCH = (1980, 1, 1, 0, 0, 0)  # zip timestamps: reproducible wheels


def _project():
    path = os.path.join(ROOT, "pyproject.toml")
    try:
        import tomllib  # Python 3.11+
        with open(path, "rb") as f:
            return tomllib.load(f)["project"]
    except ImportError:
        pass
    # Older Pythons: the simple `key = "value"` and `extra = ["req", ...]` lines of our own file.
    project, section = {}, None
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.strip()
            if line.startswith("["):
                section = line.strip("[]")
                continue
            m = re.match(r'([A-Za-z0-9_-]+)\s*=\s*(.+)$', line)
            if not m:
                continue
            key, value = m.group(1), m.group(2)
            if section == "project" and value.startswith('"'):
                project[key] = value.strip('"')
            elif section == "project.optional-dependencies":
                project.setdefault("optional-dependencies", {})[key] = re.findall(r'"([^"]*)"', value)
    return project


def _dist_name(project):
    return re.sub(r"[-_.]+", "_", project["name"]).lower()


def _metadata(project):
    lines = ["Metadata-Version: 2.1", f"Name: {project['name']}", f"Version: {project['version']}"]
    if project.get("description"):
        lines.append(f"Summary: {project['description']}")
    if project.get("requires-python"):
        lines.append(f"Requires-Python: {project['requires-python']}")
    for extra, reqs in sorted(project.get("optional-dependencies", {}).items()):
        lines.append(f"Provides-Extra: {extra}")
        for r in reqs:
            lines.append(f'Requires-Dist: {r}; extra == "{extra}"')
    readme = project.get("readme")
    body = ""
    if readme and os.path.isfile(os.path.join(ROOT, readme)):
        lines.append("Description-Content-Type: text/markdown")
        with open(os.path.join(ROOT, readme), encoding="utf-8") as f:
            body = "\n" + f.read()
    return "\n".join(lines) + "\n" + body


def _package_files():
    out = []
    for dirpath, dirnames, filenames in os.walk(os.path.join(ROOT, PACKAGE)):
        dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
        for name in sorted(filenames):
            if name.endswith(".py") or name == "py.typed":
                full = os.path.join(dirpath, name)
                out.append((os.path.relpath(full, ROOT).replace(os.sep, "/"), full))
    return out


def _write_wheel(wheel_directory, files):
    """files: [(archive name, bytes)]; adds the dist-info (METADATA, WHEEL, RECORD)."""
    project = _project()
    name, version = _dist_name(project), project["version"]
    info = f"{name}-{version}.dist-info"
    files = list(files) + [
        (f"{info}/METADATA", _metadata(project).encode()),
        (f"{info}/WHEEL", b"Wheel-Version: 1.0\nGenerator: evo_build\nRoot-Is-Purelib: true\n"
                          b"Tag: py3-none-any\n"),
    ]
    record = []
    for arc, data in files:
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        record.append(f"{arc},sha256={digest},{len(data)}")
    record.append(f"{info}/RECORD,,")
    files.append((f"{info}/RECORD", ("\n".join(record) + "\n").encode()))
    filename = f"{name}-{version}-py3-none-any.whl"
    os.makedirs(wheel_directory, exist_ok=True)
    with zipfile.ZipFile(os.path.join(wheel_directory, filename), "w", zipfile.ZIP_DEFLATED) as z:
        for arc, data in files:
            zi = zipfile.ZipInfo(arc, _EPOCH)
            zi.external_attr = 0o644 << 16
            zi.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(zi, data)
    return filename


def _read(path):
    with open(path, "rb") as f:
        return f.read()


# PEP 517 ------------------------------------------------------------------------------------
def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def get_requires_for_build_editable(config_settings=None):
    return []


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    return _write_wheel(wheel_directory, [(arc, _read(full)) for arc, full in _package_files()])


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    """PEP 660: a wheel whose .pth file puts this source directory on sys.path."""
    return _write_wheel(wheel_directory, [(f"__editable__.{PACKAGE}.pth", (ROOT + "\n").encode())])


def build_sdist(sdist_directory, config_settings=None):
    project = _project()
    base = f"{_dist_name(project)}-{project['version']}"
    members = [("pyproject.toml", os.path.join(ROOT, "pyproject.toml")),
               ("build_backend/evo_build.py", os.path.abspath(__file__))]
    if os.path.isfile(os.path.join(ROOT, "README.md")):
        members.append(("README.md", os.path.join(ROOT, "README.md")))
    members += _package_files()
    filename = base + ".tar.gz"
    os.makedirs(sdist_directory, exist_ok=True)
    with tarfile.open(os.path.join(sdist_directory, filename), "w:gz") as tar:
        pkg_info = _metadata(project).encode()
        for arc, data in [("PKG-INFO", pkg_info)] + [(a, _read(f)) for a, f in members]:
            ti = tarfile.TarInfo(f"{base}/{arc}")
            ti.size = len(data)
            ti.mode = 0o644
            tar.addfile(ti, io.BytesIO(data))
    return filename
