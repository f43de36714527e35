"""The line magics whose effect later cells see, done as IPython's do (its ``OSMagics`` and
``NamespaceMagics``): ``%cd``, ``%env``, ``%xdel``, ``%reset`` and ``%reset_selective``.

Their line is expanded first, as IPython expands a magic's line: ``$name`` and ``{expression}``
become their values in the notebook (``$$`` is a dollar), and what cannot be evaluated stays as
written. Options are read as IPython's ``parse_options`` reads them: single letters, alone or
combined (``-sf``), before the rest of the line. A magic that would ask before it deletes
(``%reset`` without ``-f``) does nothing here: the notebook's author answered a prompt we
cannot see. Standard library only: this runs inside the sandbox.
"""

from __future__ import annotations

import os
import re
from typing import Any

EFFECT_MAGICS = frozenset({"cd", "env", "xdel", "reset", "reset_selective"})

_EXPANSION = re.compile(r"\$\$|\$([A-Za-z_][\w.]*)|\{([^{}]+)\}")
_OPTIONS = re.compile(r"\s*((?:-[A-Za-z]+(?:\s+|$))*)(.*)", re.DOTALL)


class UsageError(Exception):
    """What IPython raises for a magic used wrongly."""


def run(shell: Any, name: str, line: str) -> Any:
    """Run effect magic ``name`` on ``line`` in ``shell``'s notebook."""
    expanded = expand(line, shell.user_ns)
    return _MAGICS[name](shell, expanded)


def expand(line: str, namespace: dict[str, Any]) -> str:
    """``line`` with ``$name`` and ``{expression}`` replaced by their values in ``namespace``."""

    def value(match: re.Match[str]) -> str:
        if match.group(0) == "$$":
            return "$"
        try:
            return str(eval(match.group(1) or match.group(2), namespace))
        except Exception:  # IPython leaves what it cannot evaluate as written
            return match.group(0)

    return _EXPANSION.sub(value, line)


def options(line: str) -> tuple[set[str], str]:
    """The option letters at the start of ``line`` and the rest of it, stripped."""
    match = _OPTIONS.match(line)
    assert match is not None  # the pattern matches any text
    return set("".join(word[1:] for word in match.group(1).split())), match.group(2).strip()


def _cd(shell: Any, line: str) -> None:
    """``%cd [-q] [dir | -]``: the rest of the line is the folder (spaces and all, quotes
    removed); none is the home folder, ``-`` the one before. A folder that cannot be entered is
    printed, not raised."""
    flags, target = options(line)
    if len(target) >= 2 and target[0] == target[-1] and target[0] in "'\"":
        target = target[1:-1]
    target = shell.previous_dir if target == "-" else os.path.expanduser(target or "~")
    here = os.getcwd()
    try:
        os.chdir(target)
    except OSError as exc:
        print(exc)
        return
    shell.previous_dir = here
    if "q" not in flags:
        print(os.getcwd())


def _env(shell: Any, line: str) -> Any:
    """``%env``, ``%env NAME`` and ``%env NAME=VALUE`` (or ``NAME VALUE``)."""
    if not line.strip():
        return dict(os.environ)
    parts = line.split("=" if "=" in line else " ", 1)
    if len(parts) == 1:
        key = line.strip()
        if key not in os.environ:
            raise UsageError(f"Environment does not have key: {key}")
        return os.environ[key]
    key, value = parts[0].strip(), parts[1].strip()
    if not key or any(c.isspace() for c in key):
        raise UsageError("usage is 'set_env var=val'")
    os.environ[key] = value
    print(f"env: {key}={value}")
    return None


def _xdel(shell: Any, line: str) -> None:
    """``%xdel [-n] name``: the name is gone, and so (without ``-n``) is every other name bound to
    the same object; an unknown name is printed."""
    flags, name = options(line)
    namespace = shell.user_ns
    if name not in namespace or name in shell.own_names:
        print(f"NameError: name '{name}' is not defined")
        return
    target = namespace.pop(name)
    if "n" not in flags:
        for other in [k for k, v in namespace.items() if v is target and k not in shell.own_names]:
            del namespace[other]


_HISTORY_NAMES = {"out": ("_", "__", "___", "Out"), "in": ("_i", "_ii", "_iii", "In"), "dhist": ("_dh",)}


def _reset(shell: Any, line: str) -> None:
    """``%reset -f``: every name a cell defined is gone. ``%reset -f out`` (``in``, ``dhist``)
    clears only that history, ``%reset -f array`` only the numpy arrays."""
    flags, rest = options(line)
    if "f" not in flags:
        return
    targets = [word for word in rest.split() if not word.startswith("--")]
    namespace, own = shell.user_ns, shell.own_names
    if not targets:
        for name in [n for n in namespace if n not in own]:
            del namespace[name]
    for target in targets:
        if target == "array":
            for name in [n for n, v in namespace.items() if n not in own and _is_array(v)]:
                del namespace[name]
        elif target in _HISTORY_NAMES:
            for name in _HISTORY_NAMES[target]:
                namespace.pop(name, None)
        else:
            print(f"Don't know how to reset {target}, please run `%reset?` for details")


def _is_array(value: Any) -> bool:
    kind = type(value)
    return kind.__name__ == "ndarray" and kind.__module__ == "numpy"


def _reset_selective(shell: Any, line: str) -> None:
    """``%reset_selective -f pattern``: every name a cell defined that the pattern finds is gone."""
    flags, pattern = options(line)
    if "f" not in flags or not pattern:
        return
    try:
        found = re.compile(pattern)
    except re.error as exc:
        print(exc)
        return
    for name in [n for n in shell.user_ns if n not in shell.own_names and found.search(n)]:
        del shell.user_ns[name]


_MAGICS = {"cd": _cd, "env": _env, "xdel": _xdel, "reset": _reset, "reset_selective": _reset_selective}
