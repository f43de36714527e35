"""Build the submission for one attack of this folder, to grade it by hand.

    .venv/bin/python tests/attacks_trusted/_build.py ATTACK DEST [SALT]

``<module>_<name>.py``: DEST becomes a copy of the reference (``solutions/``, module files only)
with that module replaced (``SALT = ...`` set when given). ``submission_*.py`` and ``nb_*``
files are copied to DEST as they are.
"""

import shutil
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
SOLUTIONS = HERE.parent.parent / "solutions"
MODULES = ("rmsnorm", "layernorm", "residual", "stack", "compare", "inspect_config")

attack, dest = HERE / sys.argv[1], Path(sys.argv[2])
text = attack.read_text()
if len(sys.argv) > 3:
    text = text.replace("SALT = 0", f"SALT = {int(sys.argv[3])}")
if attack.name.startswith(("submission_", "nb_")):
    dest.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(attack, dest)
else:
    module = next(m for m in sorted(MODULES, key=len, reverse=True) if attack.name.startswith(m + "_"))
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    for name in MODULES:
        shutil.copy(SOLUTIONS / f"{name}.py", dest / f"{name}.py")
    (dest / f"{module}.py").write_text(text)
print(dest)
