"""The grader's own TOML data (the message catalog, the tests' descriptions, the question bank),
parsed once per change of the file rather than once per command.

``tomllib`` is pure Python: the three files took about 22 ms of every ``normlab check`` and
``normlab grade``. The parsed data is kept as ``marshal`` beside Python's bytecode cache, with
the file's size and modification time; a cache that does not match, cannot be read or cannot
be written (a read-only install, ``PYTHONDONTWRITEBYTECODE``) means the file is parsed.
"""

from __future__ import annotations

import contextlib
import marshal
import os
import sys
import tomllib
from pathlib import Path
from typing import Any


def load_toml(path: Path) -> dict[str, Any]:
    """``path`` parsed as TOML, from the cache when it was parsed before as it is now."""
    stat = path.stat()
    stamp = (stat.st_mtime_ns, stat.st_size)
    cache = path.parent / "__pycache__" / f"{path.name}.{sys.implementation.cache_tag}.marshal"
    try:
        kept, data = marshal.loads(cache.read_bytes())
        if tuple(kept) == stamp and isinstance(data, dict):
            return data
    except (OSError, EOFError, ValueError, TypeError):
        pass  # no cache yet, or one that is not ours to read: parse the file
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    if not sys.dont_write_bytecode:
        _keep(cache, stamp, data)
    return data


def _keep(cache: Path, stamp: tuple[int, int], data: dict[str, Any]) -> None:
    """Write the cache whole or not at all (another process may be reading it)."""
    partial = cache.with_name(f"{cache.name}.{os.getpid()}.tmp")
    try:
        cache.parent.mkdir(exist_ok=True)
        partial.write_bytes(marshal.dumps((stamp, data)))
        os.replace(partial, cache)
    except (OSError, ValueError):  # read-only, or a value marshal cannot keep (a TOML date)
        with contextlib.suppress(OSError):
            partial.unlink(missing_ok=True)
