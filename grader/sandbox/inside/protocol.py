"""The wire format between the trusted grader and the untrusted worker: data only, never pickle.

A frame is an 8-byte big-endian length followed by that many payload bytes. A payload is a
JSON header followed by array blobs, each an array's raw bytes in C order:

    [4-byte header length][header JSON][8-byte blob length][raw bytes] ...

The header holds a tree of plain JSON values in which special values are objects with one
marker key: ``{"$array": i, "dtype": ..., "shape": [...], "type": ...}`` (blob ``i``: its
dtype as numpy's ``.npy`` format describes it, its shape and the exact type name the student
returned), ``{"$scalar": i, "dtype": ..., "type": ...}`` (a numpy scalar), ``{"$tuple": [...]}``,
``{"$dict": {...}}``, ``{"$callable": {...}}`` and ``{"$file": {...}}`` (requests only) and
``{"$unsupported": "type name"}`` (a result the worker could not express as data). The type
name lets the trusted side refuse subclasses without ever holding one.

Dtype and shape travel in the JSON tree rather than in a ``.npy`` header per blob because
numpy parses that header with ``ast.literal_eval``: about 90 µs an array, on both sides, for
each of the hundreds of calls a grading makes; rebuilding from the tree costs about 2 µs.

This module is imported on both sides and depends on nothing but the standard library, numpy
and the wire types.
"""

from __future__ import annotations

import json
import os
import re
import struct
from typing import Any

import numpy as np

from .wire import Unsupported, WireCallable, WireFile

MAX_DEPTH = 32
_LEN = struct.Struct(">Q")
_HEADER_LEN = struct.Struct(">I")


class ProtocolError(Exception):
    """A frame or payload that is not in this format (or exceeds a limit)."""


def _type_name(obj: object) -> str:
    cls = type(obj)
    return f"{cls.__module__}.{cls.__qualname__}"


def _encode_tree(obj: Any, blobs: list[bytes], depth: int) -> Any:
    if depth > MAX_DEPTH:
        return {"$unsupported": "structure nested too deeply"}
    kind = type(obj)
    if kind is str or kind is float or kind is int or kind is bool or obj is None:
        return obj  # most nodes (a config's keys and values): the checks below would say the same
    if isinstance(obj, WireCallable):
        return {"$callable": _encode_tree({"kind": obj.kind, "params": obj.params}, blobs, depth + 1)}
    if isinstance(obj, WireFile):
        spec = {"name": obj.name, "text": obj.text} | ({"path": True} if obj.as_path else {})
        return {"$file": _encode_tree(spec, blobs, depth + 1)}
    if obj is None or isinstance(obj, (bool, str)):
        return obj
    if isinstance(obj, (int, float)) and type(obj) in (int, float):
        return obj
    if isinstance(obj, np.ndarray):
        if obj.dtype.hasobject:
            return {"$unsupported": "numpy array of Python objects"}
        blobs.append(np.ndarray.tobytes(obj, order="C"))
        name = "numpy.ndarray" if kind is np.ndarray else _type_name(obj)
        return {"$array": len(blobs) - 1, "dtype": _descr(obj.dtype), "shape": list(obj.shape), "type": name}
    if isinstance(obj, np.generic) and not isinstance(obj, np.object_):
        if obj.dtype.hasobject:
            return {"$unsupported": "numpy scalar holding Python objects"}
        blobs.append(np.asarray(obj).tobytes())
        return {"$scalar": len(blobs) - 1, "dtype": _descr(obj.dtype), "type": _type_name(obj)}
    if type(obj) is tuple:
        return {"$tuple": [_encode_tree(v, blobs, depth + 1) for v in obj]}
    if type(obj) is list:
        return [_encode_tree(v, blobs, depth + 1) for v in obj]
    if type(obj) is dict and all(type(k) is str for k in obj):
        return {"$dict": {k: _encode_tree(v, blobs, depth + 1) for k, v in obj.items()}}
    return {"$unsupported": _type_name(obj)}


_DESCRIPTIONS: dict[np.dtype[Any], str] = {}
_DTYPES: dict[str, np.dtype[Any]] = {}
CACHED_DTYPES = 64
"""Dtypes remembered by their description, each way: the same few (``<f8``) cross hundreds of
times a grading. Structured dtypes and any beyond this many are worked out each time, so a
forged stream of descriptions cannot grow the cache."""


def _descr(dtype: np.dtype[Any]) -> Any:
    """A dtype as plain JSON: numpy's ``.npy`` description (a string, or a list of fields)."""
    found = _DESCRIPTIONS.get(dtype)
    if found is not None:
        return found
    descr = np.lib.format.dtype_to_descr(dtype)
    if isinstance(descr, str) and len(_DESCRIPTIONS) < CACHED_DTYPES:
        _DESCRIPTIONS[dtype] = descr
    return descr


def encode(obj: Any) -> bytes:
    """Serialize a tree of JSON values, tuples, str-keyed dicts and numpy arrays."""
    blobs: list[bytes] = []
    header = json.dumps(_encode_tree(obj, blobs, 0)).encode()
    parts = [_HEADER_LEN.pack(len(header)), header]
    for blob in blobs:
        parts += [_LEN.pack(len(blob)), blob]
    return b"".join(parts)


def clean_text(text: str) -> str:
    """``text`` with any lone surrogate escaped (``\\ud800``): JSON allows them, but no file,
    terminal or database the grader writes to does, so none gets past the channel."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "backslashreplace").decode("utf-8")
    return text


class _Blobs:
    """A payload's array blobs, each turned into an array at most once: a forged tree that
    named one large blob many times would otherwise multiply it in memory."""

    def __init__(self, views: list[memoryview]) -> None:
        self.views = views
        self.used: set[int] = set()

    def array(self, node: dict[str, Any], marker: str) -> np.ndarray:
        index = node[marker]
        if type(index) is not int or not 0 <= index < len(self.views) or index in self.used:
            raise ProtocolError("bad array reference")
        self.used.add(index)
        shape = node.get("shape", []) if marker == "$array" else []
        return _array(self.views[index], _dtype(node.get("dtype")), _shape(shape))


_SIMPLE_DESCR = re.compile(r"[<>|][biufcSUVmM][0-9]{1,9}(\[[0-9a-zA-Z]{1,8}\])?")


def _plain_descr(descr: Any, depth: int = 0) -> bool:
    """Whether a dtype description has the shape numpy writes: a byte order, a kind and a
    size (``<f8``), or a list of ``[name, description]`` or ``[name, description, shape]``
    fields. Numpy would also read aliases from a forged one, some of them with a warning."""
    if isinstance(descr, str):
        return _SIMPLE_DESCR.fullmatch(descr) is not None
    if not isinstance(descr, list) or depth > 4 or len(descr) > 256:
        return False
    return all(
        isinstance(field, list)
        and len(field) in (2, 3)
        and isinstance(field[0], str)
        and _plain_descr(field[1], depth + 1)
        and (len(field) == 2 or isinstance(field[2], list))
        for field in descr
    )


def _dtype(descr: Any) -> np.dtype[Any]:
    """The dtype a node declares, refused unless it is plain data."""
    if type(descr) is str and descr in _DTYPES:
        return _DTYPES[descr]
    if not _plain_descr(descr):
        raise ProtocolError("bad dtype")
    try:
        dtype = np.lib.format.descr_to_dtype(descr)
    except Exception as exc:  # numpy raises many kinds on a malformed description
        raise ProtocolError(f"bad dtype: {type(exc).__name__}") from None
    if dtype.hasobject:
        raise ProtocolError("an array of Python objects")
    if type(descr) is str and len(_DTYPES) < CACHED_DTYPES:
        _DTYPES[descr] = dtype
    return dtype


def _shape(shape: Any) -> tuple[int, ...]:
    if not isinstance(shape, list) or len(shape) > 32 or not all(type(n) is int and n >= 0 for n in shape):
        raise ProtocolError("bad shape")
    return tuple(shape)


MAX_EMPTY_ELEMENTS = 1 << 16
"""Elements accepted in an array whose items take no bytes (``<U0``): nothing in the blob
bounds their count, and the trusted side must not loop over billions of them."""


def _array(view: memoryview, dtype: np.dtype[Any], shape: tuple[int, ...]) -> np.ndarray:
    """The blob as a fresh, writable, aligned array, once its length is found to match the
    declared shape: a forged shape must never make numpy allocate what the blob does not hold."""
    count = 1
    for n in shape:
        count *= n
    if count * dtype.itemsize != len(view):
        raise ProtocolError("blob length does not match its shape")
    if dtype.itemsize == 0:
        if count > MAX_EMPTY_ELEMENTS:
            raise ProtocolError("too many empty elements")
        return np.zeros(shape, dtype)
    return np.frombuffer(view, dtype=dtype, count=count).reshape(shape).copy()


def _decode_tree(node: Any, blobs: _Blobs, depth: int, requests: bool) -> Any:
    if depth > MAX_DEPTH:
        raise ProtocolError("structure nested too deeply")
    if type(node) is str:  # parsed JSON: every value is of an exact type
        return node if node.isascii() else clean_text(node)
    if node is None or isinstance(node, (bool, int, float)):
        return node
    if isinstance(node, list):
        return [_decode_tree(v, blobs, depth + 1, requests) for v in node]
    if not isinstance(node, dict) or not node:
        raise ProtocolError("malformed node")
    if "$array" in node or "$scalar" in node:
        return _decode_array(node, blobs)
    if len(node) != 1:
        raise ProtocolError("malformed node")
    ((key, value),) = node.items()
    if key == "$tuple" and isinstance(value, list):
        return tuple(_decode_tree(v, blobs, depth + 1, requests) for v in value)
    if key == "$dict" and isinstance(value, dict):
        return {clean_text(str(k)): _decode_tree(v, blobs, depth + 1, requests) for k, v in value.items()}
    if key == "$unsupported":
        return Unsupported(clean_text(str(value))[:200])
    # Only requests (trusted -> worker) may describe callables or files; a worker that sends
    # one back is refusing to answer with data.
    if requests and key in ("$callable", "$file") and isinstance(value, dict):
        return {key: _decode_tree(value, blobs, depth + 1, requests)}
    raise ProtocolError(f"unknown node {key!r}")


_ARRAY_KEYS = {"$array": {"$array", "dtype", "shape", "type"}, "$scalar": {"$scalar", "dtype", "type"}}


def _decode_array(node: dict[str, Any], blobs: _Blobs) -> Any:
    marker = "$array" if "$array" in node else "$scalar"
    if not _ARRAY_KEYS[marker] >= node.keys() >= {marker, "dtype"}:
        raise ProtocolError("malformed array node")
    value = blobs.array(node, marker)
    if marker == "$scalar":
        return value[()]
    declared = node.get("type", "numpy.ndarray")
    # A subclass or masked array arrives as its bare data; refuse it rather than grade
    # values whose meaning the student's class may have changed.
    return value if declared == "numpy.ndarray" else Unsupported(clean_text(str(declared))[:200])


MAX_HEADER = 1 << 20
"""Largest JSON header accepted: the bulk of an answer travels as array blobs, and a JSON tree
costs many times its size in memory once parsed."""


def decode(payload: bytes, *, requests: bool = False, max_arrays: int = 4096, max_header: int = MAX_HEADER) -> Any:
    """Parse a payload into its tree; arrays come back as plain ``np.ndarray``.

    ``requests=True`` (the worker reading the grader's requests) also accepts callable and
    file descriptions. The header's size is checked before it is parsed. Raises
    :class:`ProtocolError` on anything malformed."""
    view = memoryview(payload)
    if len(view) < _HEADER_LEN.size:
        raise ProtocolError("truncated header")
    (hlen,) = _HEADER_LEN.unpack(view[: _HEADER_LEN.size])
    if hlen > max_header:
        raise ProtocolError(f"header of {hlen} bytes exceeds the {max_header}-byte limit")
    pos = _HEADER_LEN.size + hlen
    if pos > len(view):
        raise ProtocolError("truncated header")
    try:
        header = json.loads(bytes(view[_HEADER_LEN.size : pos]).decode())
    except (ValueError, RecursionError) as exc:  # bad UTF-8, bad JSON, huge ints, deep nesting
        raise ProtocolError(f"header is not JSON: {exc}") from None
    views: list[memoryview] = []
    while pos < len(view):
        if len(views) >= max_arrays:
            raise ProtocolError("too many arrays")
        if pos + _LEN.size > len(view):
            raise ProtocolError("truncated blob length")
        (blen,) = _LEN.unpack(view[pos : pos + _LEN.size])
        pos += _LEN.size
        if pos + blen > len(view):
            raise ProtocolError("truncated blob")
        views.append(view[pos : pos + blen])
        pos += blen
    return _decode_tree(header, _Blobs(views), 0, requests)


def frame(payload: bytes) -> bytes:
    """One length-prefixed frame: the bytes a reader of this protocol takes as one payload."""
    return _LEN.pack(len(payload)) + payload


def write_frame(fd: int, payload: bytes) -> None:
    """Write one length-prefixed frame to a file descriptor, all of it."""
    data = memoryview(frame(payload))
    while data:
        written = os.write(fd, data)
        data = data[written:]


def read_exact(fd: int, n: int) -> bytes:
    """Read exactly ``n`` bytes; raises ``EOFError`` if the stream ends first."""
    chunks = []
    while n:
        chunk = os.read(fd, min(n, 1 << 20))
        if not chunk:
            raise EOFError("stream closed")
        chunks.append(chunk)
        n -= len(chunk)
    return b"".join(chunks)


def frame_length(header: bytes, limit: int) -> int:
    """The payload length announced by a frame header, refused above ``limit``."""
    n: int = _LEN.unpack(header)[0]
    if n > limit:
        raise ProtocolError(f"frame of {n} bytes exceeds the {limit}-byte limit")
    return n


FRAME_HEADER_SIZE = _LEN.size
