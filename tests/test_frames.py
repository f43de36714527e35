"""Reading the worker's response frames: whole frames, in order, within a deadline, capped."""

import os
import struct
import threading
import time

import pytest

from grader.sandbox.client import FrameKind, FrameReader, write_before


def _frame(payload: bytes) -> bytes:
    return struct.pack(">Q", len(payload)) + payload


@pytest.fixture
def pipe():
    r, w = os.pipe()
    reader = FrameReader(r, limit=1 << 16)
    yield reader, w
    reader.close()
    try:
        os.close(w)
    except OSError:
        pass


def test_frames_written_together_come_out_one_at_a_time(pipe):
    reader, w = pipe
    os.write(w, _frame(b"first") + _frame(b"") + _frame(b"third"))
    deadline = time.monotonic() + 5
    assert [reader.next(deadline) for _ in range(3)] == [
        (FrameKind.FRAME, b"first"),
        (FrameKind.FRAME, b""),
        (FrameKind.FRAME, b"third"),
    ]


def test_a_frame_written_in_pieces_arrives_whole(pipe):
    reader, w = pipe
    data = _frame(b"x" * 200_000)  # larger than a pipe's buffer: the writer blocks until read

    def write_slowly():
        for start in range(0, len(data), 7_000):
            os.write(w, data[start : start + 7_000])
            time.sleep(0.001)

    writer = threading.Thread(target=write_slowly)
    writer.start()
    reader.limit = 1 << 20
    assert reader.next(time.monotonic() + 10) == (FrameKind.FRAME, b"x" * 200_000)
    writer.join()


@pytest.mark.parametrize("size", [(1 << 16) - 8, 1 << 16, (1 << 16) + 1, 3 << 20])
def test_frames_around_the_read_sizes_arrive_whole_and_in_order(pipe, size):
    """A read asks for what the frame still needs (at least a pipe's worth, at most 1 MiB):
    frames at and past those sizes, written at once behind a small one, come out whole."""
    reader, w = pipe
    big = bytes(range(256)) * (size // 256) + b"z" * (size % 256)
    data = _frame(b"small") + _frame(big) + _frame(b"after")
    writer = threading.Thread(target=lambda: os.write(w, data))
    writer.start()
    reader.limit = 4 << 20
    deadline = time.monotonic() + 10
    assert [reader.next(deadline) for _ in range(3)] == [
        (FrameKind.FRAME, b"small"),
        (FrameKind.FRAME, big),
        (FrameKind.FRAME, b"after"),
    ]
    writer.join()


def test_a_frame_over_the_cap_is_refused_before_its_bytes_are_kept(pipe):
    reader, w = pipe
    os.write(w, struct.pack(">Q", (1 << 16) + 1) + b"y" * 1000)
    kind, detail = reader.next(time.monotonic() + 5)
    assert kind is FrameKind.INVALID and "limit" in detail
    assert len(reader.buffer) == 0
    assert reader.next(time.monotonic() + 5)[0] is FrameKind.INVALID  # and stays refused


def test_the_stream_ending_mid_frame_is_the_end(pipe):
    reader, w = pipe
    os.write(w, _frame(b"whole") + struct.pack(">Q", 100) + b"part")
    os.close(w)
    assert reader.next(time.monotonic() + 5) == (FrameKind.FRAME, b"whole")
    assert reader.next(time.monotonic() + 5)[0] is FrameKind.EOF


def test_a_stalled_frame_times_out_at_the_deadline(pipe):
    reader, w = pipe
    os.write(w, struct.pack(">Q", 100) + b"only part of it")
    started = time.monotonic()
    assert reader.next(started + 0.3) is None
    assert 0.25 <= time.monotonic() - started < 2.0


# -- writing requests within a deadline ---------------------------------------------------------------


@pytest.fixture
def request_pipe():
    r, w = os.pipe()
    os.set_blocking(w, False)
    yield r, w
    for fd in (r, w):
        try:
            os.close(fd)
        except OSError:
            pass


def test_a_request_nobody_reads_gives_up_at_the_deadline(request_pipe):
    """A worker whose code stopped reading must not hold the grader in a write: a request
    larger than the pipe is abandoned at the call's deadline."""
    _, w = request_pipe
    started = time.monotonic()
    assert write_before(w, b"x" * (1 << 20), started + 0.3) is False
    assert 0.25 <= time.monotonic() - started < 2.0


def test_a_request_read_slowly_is_written_whole(request_pipe):
    r, w = request_pipe
    data = bytes(range(256)) * 4096  # 1 MiB, many times a pipe's capacity
    got = bytearray()

    def read_slowly():
        while len(got) < len(data):
            got.extend(os.read(r, 50_000))
            time.sleep(0.001)

    reader = threading.Thread(target=read_slowly)
    reader.start()
    assert write_before(w, data, time.monotonic() + 10) is True
    reader.join(10)
    assert bytes(got) == data


def test_a_request_to_a_closed_pipe_is_a_broken_pipe(request_pipe):
    r, w = request_pipe
    os.close(r)
    with pytest.raises(BrokenPipeError):
        write_before(w, b"x" * 10, time.monotonic() + 1)
