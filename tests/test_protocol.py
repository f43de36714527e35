"""The wire format: data round-trips, everything else is refused."""

import io
import json
import struct

import numpy as np
import pytest

from grader.sandbox.inside import protocol
from grader.sandbox.inside.protocol import ProtocolError, decode, encode
from grader.sandbox.inside.wire import Unsupported, WireCallable, WireFile


def test_round_trip_of_every_supported_value():
    tree = {
        "a": np.arange(6, dtype=np.float32).reshape(2, 3),
        "t": (1, 2.5, "s", None, True),
        "l": [np.float64(3.5), np.int32(7), {"nested": np.zeros((0, 4))}],
    }
    back = decode(encode(tree))
    assert type(back["a"]) is np.ndarray and back["a"].dtype == np.float32
    np.testing.assert_array_equal(back["a"], tree["a"])
    assert back["t"] == (1, 2.5, "s", None, True)
    assert back["l"][0] == 3.5 and isinstance(back["l"][0], np.float64)
    assert back["l"][1] == 7 and back["l"][2]["nested"].shape == (0, 4)


@pytest.mark.parametrize(
    "value",
    [
        np.arange(12.0).reshape(3, 4).T,  # not C-contiguous
        np.array([1, 2, 3], dtype=">i4"),
        np.zeros(2, dtype=[("a", "<f8"), ("b", "<i4", (3,))]),
        np.array(["ab", "c"]),
        np.array(2.5),
        np.array([], dtype="<U1").reshape(0, 3),
        np.array(["2026-12-01", "2027-01-01"], dtype="datetime64[D]"),
        np.float16(1.5),
        np.complex64(1 - 2j),
    ],
)
def test_arrays_keep_dtype_shape_and_values_and_arrive_writable(value):
    back = decode(encode(value))
    assert type(back) is type(value) and back.dtype == value.dtype and back.shape == value.shape
    np.testing.assert_array_equal(back, value)
    if isinstance(back, np.ndarray):
        assert back.flags.writeable and back.flags.aligned


class Lying(np.ndarray):
    def __eq__(self, other):
        return True


@pytest.mark.parametrize("value", [object(), Lying((2,)), np.ma.masked_array([1.0]), np.array([object()]), {1: 2}])
def test_values_that_are_not_data_arrive_as_unsupported(value):
    back = decode(encode({"v": value}))
    assert isinstance(back["v"], Unsupported)


def test_callables_and_files_cross_only_as_requests():
    payload = encode([WireCallable("scale", {"factor": 2.0}), WireFile("c.json", "{}")])
    assert decode(payload, requests=True)[0] == {"$callable": {"kind": "scale", "params": {"factor": 2.0}}}
    with pytest.raises(ProtocolError):
        decode(payload)


def _payload(header: object, blobs: list[bytes]) -> bytes:
    raw = json.dumps(header).encode()
    return struct.pack(">I", len(raw)) + raw + b"".join(struct.pack(">Q", len(b)) + b for b in blobs)


def _array(dtype: object, shape: list[object], index: int = 0) -> dict[str, object]:
    return {"$array": index, "dtype": dtype, "shape": shape, "type": "numpy.ndarray"}


def _npy(array) -> bytes:
    buf = io.BytesIO()
    np.save(buf, array, allow_pickle=True)
    return buf.getvalue()


@pytest.mark.parametrize(
    "payload",
    [
        b"",
        b"\x00\x00\x00\x05{}",
        _payload({"$array": 3}, []),
        _payload({"$array": 0}, [b"\x93NUMPY garbage"]),
        _payload({"$array": 0}, [_npy(np.array([{"pickled": 1}], dtype=object))]),
        _payload({"$weird": 1}, []),
        _payload({"$scalar": 0}, [_npy(np.zeros(3))]),
        struct.pack(">I", 4) + b"1e99999999999",
        # arrays in the current format, each forged in one way
        _payload(_array("|O", [1]), [b"\0" * 8]),
        _payload(_array([["a", "<f8"], ["b", "|O"]], [1]), [b"\0" * 16]),
        _payload(_array("<f8", [1 << 45]), [b"\0" * 64]),
        _payload(_array("<f8", [-1, -8]), [b"\0" * 64]),
        _payload(_array("<f8", [2.0]), [b"\0" * 16]),
        _payload(_array("<f8", [3]), [b"\0" * 16]),
        _payload(_array("a5", [1]), [b"\0" * 5]),
        _payload(_array("float", [1]), [b"\0" * 8]),
        _payload(_array("<U0", [1 << 40]), [b""]),
        _payload(_array("<f8", [1]) | {"extra": 1}, [b"\0" * 8]),
        _payload({"$array": 0, "shape": [1]}, [b"\0" * 8]),
        _payload({"$scalar": 0, "dtype": "<f8", "shape": [2]}, [b"\0" * 16]),
        _payload([_array("<f8", [1]), _array("<f8", [1])], [b"\0" * 8]),
    ],
)
def test_malformed_payloads_are_refused(payload):
    with pytest.raises(ProtocolError):
        decode(payload)


def test_deeply_nested_structures_are_refused():
    deep: object = 1
    for _ in range(100):
        deep = [deep]
    with pytest.raises(ProtocolError):
        decode(_payload(deep, []))


def test_frame_length_is_capped():
    header = struct.pack(">Q", 10_000)
    assert protocol.frame_length(header, 10_000) == 10_000
    with pytest.raises(ProtocolError):
        protocol.frame_length(header, 9_999)
