"""The wire format between the trusted grader and the untrusted worker: data only, never pickle.

A frame is an 8-byte big-endian length followed by that many payload bytes. A payload is a
JSON header followed by array blobs, each written with ``np.save(allow_pickle=False)``:

    [4-byte header length][header JSON][8-byte blob length][.npy bytes] ...

The header holds a tree of plain JSON values in which special values are one-key objects:
``{"$array": i}`` (blob ``i``), ``{"$scalar": i}`` (a numpy scalar kept as a 0-d blob),
``{"$tuple": [...]}``, ``{"$dict": {...}}``, ``{"$callable": {...}}`` and ``{"$file": {...}}``
(requests only) and ``{"$unsupported": "type name"}`` (a result the worker could not express
as data). Arrays carry the exact type name the student returned so that the trusted side can
refuse subclasses without ever holding one.

This module is imported on both sides and depends on nothing but the standard library, numpy
and the wire types.
"""

from __future__ import annotations

import io
import json
import os
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
    if isinstance(obj, WireCallable):
        return {"$callable": _encode_tree({"kind": obj.kind, "params": obj.params}, blobs, depth + 1)}
    if isinstance(obj, WireFile):
        return {"$file": _encode_tree({"name": obj.name, "text": obj.text}, blobs, depth + 1)}
    if obj is None or isinstance(obj, (bool, str)):
        return obj
    if isinstance(obj, (int, float)) and type(obj) in (int, float):
        return obj
    if isinstance(obj, np.ndarray):
        if obj.dtype.hasobject:
            return {"$unsupported": "numpy array of Python objects"}
        buf = io.BytesIO()
        np.save(buf, np.asarray(obj), allow_pickle=False)
        blobs.append(buf.getvalue())
        return {"$array": len(blobs) - 1, "type": _type_name(obj)}
    if isinstance(obj, np.generic) and not isinstance(obj, np.object_):
        buf = io.BytesIO()
        np.save(buf, np.asarray(obj), allow_pickle=False)
        blobs.append(buf.getvalue())
        return {"$scalar": len(blobs) - 1, "type": _type_name(obj)}
    if type(obj) is tuple:
        return {"$tuple": [_encode_tree(v, blobs, depth + 1) for v in obj]}
    if type(obj) is list:
        return [_encode_tree(v, blobs, depth + 1) for v in obj]
    if type(obj) is dict and all(type(k) is str for k in obj):
        return {"$dict": {k: _encode_tree(v, blobs, depth + 1) for k, v in obj.items()}}
    return {"$unsupported": _type_name(obj)}


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


def _decode_tree(node: Any, arrays: list[np.ndarray], depth: int, requests: bool) -> Any:
    if depth > MAX_DEPTH:
        raise ProtocolError("structure nested too deeply")
    if isinstance(node, str):
        return clean_text(node)
    if node is None or isinstance(node, (bool, int, float)):
        return node
    if isinstance(node, list):
        return [_decode_tree(v, arrays, depth + 1, requests) for v in node]
    if not isinstance(node, dict) or len(node) not in (1, 2):
        raise ProtocolError("malformed node")
    if "$array" in node or "$scalar" in node:
        index = node.get("$array", node.get("$scalar"))
        if type(index) is not int or not 0 <= index < len(arrays):
            raise ProtocolError("bad array reference")
        value = arrays[index]
        if "$scalar" in node:
            if value.ndim != 0:
                raise ProtocolError("scalar blob is not 0-d")
            return value[()]
        declared = node.get("type", "numpy.ndarray")
        # A subclass or masked array arrives as its bare data; refuse it rather than grade
        # values whose meaning the student's class may have changed.
        return value if declared == "numpy.ndarray" else Unsupported(clean_text(str(declared))[:200])
    if len(node) != 1:
        raise ProtocolError("malformed node")
    ((key, value),) = node.items()
    if key == "$tuple" and isinstance(value, list):
        return tuple(_decode_tree(v, arrays, depth + 1, requests) for v in value)
    if key == "$dict" and isinstance(value, dict):
        return {clean_text(str(k)): _decode_tree(v, arrays, depth + 1, requests) for k, v in value.items()}
    if key == "$unsupported":
        return Unsupported(clean_text(str(value))[:200])
    # Only requests (trusted -> worker) may describe callables or files; a worker that sends
    # one back is refusing to answer with data.
    if requests and key in ("$callable", "$file") and isinstance(value, dict):
        return {key: _decode_tree(value, arrays, depth + 1, requests)}
    raise ProtocolError(f"unknown node {key!r}")


def _check_npy_header(blob: io.BytesIO, size: int) -> None:
    """Refuse a blob whose header promises more data than it carries, before numpy allocates
    the array the header describes (a forged header could ask for terabytes)."""
    try:
        version = np.lib.format.read_magic(blob)
        read = np.lib.format.read_array_header_1_0 if version == (1, 0) else np.lib.format.read_array_header_2_0
        shape, _, dtype = read(blob)
    except (ValueError, OSError, EOFError, SyntaxError, TypeError) as exc:
        raise ProtocolError(f"blob is not a .npy array: {exc}") from None
    if dtype.hasobject or len(shape) > 32:
        raise ProtocolError("blob is not a plain numeric array")
    count = 1
    for n in shape:
        count *= int(n)
    if count * dtype.itemsize != size - blob.tell():
        raise ProtocolError("blob length does not match its header")
    blob.seek(0)


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
    arrays: list[np.ndarray] = []
    while pos < len(view):
        if len(arrays) >= max_arrays:
            raise ProtocolError("too many arrays")
        if pos + _LEN.size > len(view):
            raise ProtocolError("truncated blob length")
        (blen,) = _LEN.unpack(view[pos : pos + _LEN.size])
        pos += _LEN.size
        if pos + blen > len(view):
            raise ProtocolError("truncated blob")
        blob = io.BytesIO(view[pos : pos + blen])
        _check_npy_header(blob, blen)
        try:
            arrays.append(np.load(blob, allow_pickle=False))
        except (ValueError, OSError, EOFError) as exc:
            raise ProtocolError(f"blob is not a .npy array: {exc}") from None
        pos += blen
    return _decode_tree(header, arrays, 0, requests)


def write_frame(fd: int, payload: bytes) -> None:
    """Write one length-prefixed frame to a file descriptor, all of it."""
    data = memoryview(_LEN.pack(len(payload)) + payload)
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
