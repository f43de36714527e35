"""The types that cross the channel besides plain data: what a request may describe, and what
an answer that is not data turns into.

Both sides import this module (the trusted side to build requests and read answers, the
worker to rebuild arguments), so it depends on nothing but the standard library.
"""

from __future__ import annotations

from typing import Any


class WireCallable:
    """A request argument that the worker turns into a callable (see ``callables.py``)."""

    def __init__(self, kind: str, params: dict[str, Any]) -> None:
        self.kind, self.params = kind, params


class WireFile:
    """A request argument that the worker writes to a scratch file and passes as its path: a
    ``str``, or with ``as_path`` a ``pathlib.Path``."""

    def __init__(self, name: str, text: str, as_path: bool = False) -> None:
        self.name, self.text, self.as_path = name, text, as_path


class Unsupported:
    """A value the sender could not express as data; carries only the sender's type name."""

    __slots__ = ("type_name",)

    def __init__(self, type_name: str) -> None:
        self.type_name = type_name

    def __repr__(self) -> str:
        return f"Unsupported({self.type_name!r})"
