"""The trusted side of the worker: start it, send calls, enforce limits, restart it.

One :class:`Worker` serves one submission. Each call has a wall-clock limit enforced here, from
outside the worker, with SIGKILL; a worker that dies or stalls is replaced for the next call.
Responses are read on the calling thread, frame by frame, with a size cap, only while a call
waits for its answer; raw stdout and stderr are drained continuously by threads so a flood can
never block the worker or fill our memory.
"""

from __future__ import annotations

import math
import os
import secrets
import select
import signal
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from enum import Enum
from typing import Any

from grader.faults import GraderFault
from grader.sandbox.inside import protocol
from grader.sandbox.launch import Launch, Process
from grader.sandbox.limits import Limits


class CappedBuffer:
    """Keeps the first ``cap`` bytes and the last ``tail`` bytes of a stream; counts the rest."""

    def __init__(self, cap: int, tail: int = 4096) -> None:
        self.cap, self.tail_cap = cap, tail
        self.head = bytearray()
        self.tail = bytearray()
        self.total = 0
        self.lock = threading.Lock()

    def feed(self, data: bytes) -> None:
        with self.lock:
            self.total += len(data)
            room = self.cap - len(self.head)
            if room > 0:
                self.head += data[:room]
                data = data[room:]
            if data:
                self.tail = (self.tail + data)[-self.tail_cap :]

    def text(self) -> str:
        with self.lock:
            dropped = self.total - len(self.head) - len(self.tail)
            middle = f"\n[... {dropped} bytes not shown ...]\n" if dropped > 0 else ""
            return (bytes(self.head) + middle.encode() + bytes(self.tail)).decode("utf-8", "replace")


def drain(stream: Any, buffer: CappedBuffer) -> None:
    """Read a pipe until it closes, so the worker never blocks on a full pipe."""
    try:
        while chunk := stream.read1(65536):
            buffer.feed(chunk)
    except (OSError, ValueError):
        pass
    finally:
        stream.close()


class FrameKind(Enum):
    """What the reader thread found on the response pipe."""

    FRAME = "frame"
    """A decoded response frame."""
    EOF = "eof"
    """The worker closed its end (it exited or died)."""
    INVALID = "invalid"
    """Bytes that are not a frame of the protocol, or a frame over the size limit."""


class ReplyKind(Enum):
    """How one call ended."""

    ANSWER = "answer"
    """A response frame arrived."""
    TIMEOUT = "timeout"
    """The wall-clock limit passed; the worker was killed."""
    DIED = "died"
    """The worker process ended without answering."""
    INVALID = "invalid"
    """The worker answered with something that is not a response."""


SKIP_REASONS = {ReplyKind.TIMEOUT: "timeout", ReplyKind.DIED: "crashed"}
"""Why a notebook cell was skipped, by how the worker's start ended while it ran (any other
ending: ``"channel"``, the cell wrote on the grader's channel)."""


@dataclass
class Reply:
    """How one call ended, as seen from the trusted side."""

    kind: ReplyKind
    message: dict[str, Any] = field(default_factory=dict)
    """The decoded response for ``answer``."""
    returncode: int | None = None
    """For ``died``: the worker's exit status (negative: killed by that signal)."""
    importing: str | None = None
    """The module being imported when the call ended, if an import was under way."""
    detail: str = ""
    """For ``invalid``: what was wrong with the response."""
    stderr: str = ""
    cell: int | None = None
    """The notebook cell that was running when the worker stopped, while it started."""
    first_start_seconds: float = 0.0
    """Seconds this call spent on the worker's first start (a notebook's cells, run once as
    Jupyter ran them): not the student's functions' time, so not the submission's budget."""
    where: str = ""
    """For ``timeout``: the student's frames that were running when the worker interrupted the
    call at its limit (the worker's word, so the student's: shown on public tests only)."""


STOP_GRACE_SECONDS = 0.5
"""How long past a call's limit the trusted side waits for the worker's report that it
interrupted the call (which line was running) before killing it. The call is a timeout either
way, and the worker is killed either way: only the report is waited for."""
CELL_GRACE_SECONDS = 2.0
"""How long past its limit a cell may take to stop by itself (the worker interrupts it, as
Jupyter's Interrupt does, so that what it defined stays) before the worker is killed and the
cell skipped: code that swallows the interrupt, or one long C call."""
SETUP_SECONDS = 30.0
"""How long a fresh worker may take to read its setup (it runs none of the student's code
before): far beyond a loaded machine's start."""
CLOSE_SECONDS = 0.5
"""How long a worker whose requests have ended has to exit before it is killed."""


def _decoded(payload: bytes) -> tuple[FrameKind, Any]:
    """A frame's payload as data, or why it is not a response."""
    try:
        return FrameKind.FRAME, protocol.decode(payload)
    except (protocol.ProtocolError, MemoryError, RecursionError, ValueError) as exc:
        return FrameKind.INVALID, f"{type(exc).__name__}: {exc}"


class FrameReader:
    """Reads the worker's response frames on the thread that waits for them, within a deadline.

    A frame's announced length is checked against the cap before its bytes are kept, and at
    most one frame (and one read's worth beyond it) is held at a time, so a flood of forged
    frames costs time, not memory; a worker that writes faster than the grader reads blocks on
    its full pipe. A reader thread handing frames over a queue cost two thread wake-ups a call,
    about a third of a small call's trusted CPU."""

    CHUNK = 1 << 20
    PIPE = 1 << 16
    """A Linux pipe's default capacity: one read takes all a worker can have written."""

    def __init__(self, fd: int, limit: int) -> None:
        os.set_blocking(fd, False)
        self.fd, self.limit = fd, limit
        self.buffer = bytearray()
        self.length: int | None = None
        """The payload length of the frame being read, once its header is in."""
        self.ended: tuple[FrameKind, Any] | None = None
        self.poller = select.poll()
        self.poller.register(fd, select.POLLIN)

    def next(self, deadline: float) -> tuple[FrameKind, Any] | None:
        """The next raw frame, or how the stream ended; None once ``deadline`` has passed."""
        while True:
            frame = self._take()
            if frame is not None:
                return frame
            if self.ended is not None:
                return self.ended
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return None
            if self.poller.poll(max(1, int(remaining * 1000) + 1)):
                self._read()

    def _read(self) -> None:
        # As much as the frame being read still needs, at least a pipe's worth: a read asks
        # the allocator for its whole size first, and a 1 MiB ask per small answer (mapped and
        # unmapped each time) cost more trusted CPU than anything else in a call.
        missing = (self.length or 0) - len(self.buffer)
        try:
            chunk = os.read(self.fd, min(self.CHUNK, max(self.PIPE, missing)))
        except BlockingIOError:
            return
        except OSError as exc:
            self.ended = (FrameKind.EOF, str(exc))
            return
        if not chunk:
            self.ended = (FrameKind.EOF, None)
        self.buffer += chunk

    def _take(self) -> tuple[FrameKind, Any] | None:
        if self.length is None:
            if len(self.buffer) < protocol.FRAME_HEADER_SIZE:
                return None
            try:
                self.length = protocol.frame_length(bytes(self.buffer[: protocol.FRAME_HEADER_SIZE]), self.limit)
            except protocol.ProtocolError as exc:
                self.ended = (FrameKind.INVALID, f"{type(exc).__name__}: {exc}")
                self.buffer.clear()
                return None
            del self.buffer[: protocol.FRAME_HEADER_SIZE]
        if len(self.buffer) < self.length:
            return None
        payload = bytes(self.buffer[: self.length])
        del self.buffer[: self.length]
        self.length = None
        return FrameKind.FRAME, payload

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1


def write_before(fd: int, data: bytes, deadline: float) -> bool:
    """Write all of ``data`` to the non-blocking ``fd`` by ``deadline``; False if it could not.
    The worker's code may stop reading its requests (the student's code can replace the
    worker's reader): a request larger than the pipe would then block a plain write, and the
    grader with it, for ever."""
    view = memoryview(data)
    poller: select.poll | None = None
    while view:
        try:
            view = view[os.write(fd, view) :]
            continue
        except BlockingIOError:
            pass
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return False
        if poller is None:
            poller = select.poll()
            poller.register(fd, select.POLLOUT)
        poller.poll(max(1, int(remaining * 1000) + 1))
    return True


def start_process(launch: Launch, fds: list[int], stdout: int, stderr: int) -> subprocess.Popen[bytes]:
    """Start ``launch``'s command in a session of its own, with ``fds`` passed to it and named
    as its last arguments (the harness and the zygote read them there)."""
    argv, passed = [*launch.argv, *map(str, fds)], list(fds)
    options_r = -1
    if launch.options:  # the launcher reads its options from a pipe (see Launch.options)
        if len(launch.options) >= select.PIPE_BUF * 8:  # must fit the pipe before anyone reads it
            raise GraderFault("the sandbox's options do not fit in a pipe")
        options_r, options_w = os.pipe()
        os.write(options_w, launch.options)
        os.close(options_w)
        argv[1:1] = ["--args", str(options_r)]
        passed.append(options_r)
    try:
        return subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=stdout,
            stderr=stderr,
            env=launch.env,
            cwd="/",
            pass_fds=tuple(passed),
            preexec_fn=launch.preexec,
            start_new_session=True,
            close_fds=True,
            user=launch.uid,
            group=launch.uid,
            extra_groups=[] if launch.uid is not None else None,
        )
    finally:
        if options_r >= 0:
            os.close(options_r)


class PopenChild:
    """A worker started as a process of its own (and its session: bubblewrap and the rest)."""

    def __init__(self, popen: subprocess.Popen[bytes]) -> None:
        self.popen = popen

    def wait(self, timeout: float) -> int | None:
        try:
            return self.popen.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            return None

    def kill(self) -> None:
        try:
            os.killpg(self.popen.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        try:
            self.popen.kill()
        except ProcessLookupError:
            pass
        self.popen.wait()


class NotebookStopped(Exception):
    """A notebook's cells keep the worker from starting (they stop it or hang) in a way that
    skipping one cell at a time does not mend, or take longer than ``Limits.notebook_seconds``
    all together (``too_slow``); the student's fault, for every call."""

    def __init__(self, cell: int | None, too_slow: bool = False, budget: bool = False) -> None:
        super().__init__(cell)
        self.too_slow = too_slow
        self.budget = budget
        """A restart whose cells ran past what was left of the submission's budget."""


class Worker:
    """A restartable worker process for one submission."""

    def __init__(
        self,
        make_launch: Callable[[], Launch],
        setup: dict[str, Any],
        limits: Limits,
        cells: frozenset[int] = frozenset(),
    ) -> None:
        self.make_launch = make_launch
        self.setup = setup
        self.limits = limits
        self.proc: Process | None = None
        self.frames: FrameReader | None = None
        self.launch: Launch | None = None
        self.ready: dict[str, Any] = {}
        self.cell_outcomes: Any = None
        """What the worker reported of a notebook's cells the first time it ran them (checked by
        the runner before anything reads it)."""
        self.cells = cells
        """A notebook's code cells the worker runs when it starts (their numbers)."""
        self.skipped_cells: dict[int, str] = {}
        """Cells not run any more: ``timeout`` or ``crashed`` (it stopped the process)."""
        self.started = False
        """Whether the worker got ready once: what the first start reported is kept, whatever a
        later start (after a hidden test's crash) or a forged ready says."""
        self.first_run_skipped: dict[int, str] = {}
        """The cells skipped before the worker first got ready, before any test's input reached
        it: what a report may say. A cell skipped on a later start may have behaved on what a
        hidden test did (a crash that restarts the worker), so naming it could tell that."""
        self._req_w = -1
        self.stopped: NotebookStopped | None = None
        """Why the notebook cannot start, once known: every later call fails at once."""
        self._cells_until = math.inf
        """When the current start's cells, all together, run out of time."""
        self._prestarted = False
        """A worker was started by :meth:`prestart` and is not known to be ready yet."""
        self._stderr = CappedBuffer(limits.output_bytes)
        self._stdout = CappedBuffer(limits.output_bytes)

    # -- lifecycle -------------------------------------------------------------------------

    def _spawn(self, launch: Launch) -> None:
        """Start the worker process and its readers, and send it its setup."""
        req_r, req_w = os.pipe()
        resp_r, resp_w = os.pipe()
        self._stdout, self._stderr = CappedBuffer(self.limits.output_bytes), CappedBuffer(self.limits.output_bytes)
        out_r, out_w = os.pipe()
        err_r, err_w = os.pipe()
        child_ends = (req_r, resp_w, out_w, err_w)
        try:
            if launch.zygote is not None:  # the warm sandbox forks it (see sandbox/zygote.py)
                self.proc = launch.zygote.spawn(list(child_ends))
            else:
                self.proc = PopenChild(start_process(launch, [req_r, resp_w], stdout=out_w, stderr=err_w))
        except BaseException:
            for fd in (req_w, resp_r, out_r, err_r):
                os.close(fd)
            raise
        finally:
            for fd in child_ends:
                os.close(fd)
        streams = (os.fdopen(out_r, "rb"), os.fdopen(err_r, "rb"))
        os.set_blocking(req_w, False)  # requests are written within a deadline (write_before)
        self._req_w = req_w
        self.frames = FrameReader(resp_r, self.limits.result_bytes)
        for stream, buffer in zip(streams, (self._stdout, self._stderr), strict=True):
            threading.Thread(target=drain, args=(stream, buffer), daemon=True).start()
        setup = dict(self.setup, directory=launch.directory)
        if "cells" in setup:
            setup["skip_cells"] = sorted(self.skipped_cells)
            setup["cell_seconds"] = self.limits.cell_seconds  # the worker stops a cell itself first
        if launch.seccomp is not None:
            import numpy as np

            setup["seccomp"] = np.frombuffer(launch.seccomp, dtype=np.uint8)
        # Read before any of the student's code runs, so only a worker that cannot start misses it.
        if not self._send(setup, time.monotonic() + SETUP_SECONDS):
            raise GraderFault(f"the worker did not take its setup within {SETUP_SECONDS:.0f} s")

    def prestart(self) -> None:
        """Start the worker now without waiting for it: it starts its interpreter, imports numpy
        and runs a notebook's cells while the trusted side collects the suites. The first call
        waits for it to be ready, as for a worker it starts itself."""
        if self.proc is None:
            self.launch = self.make_launch()
            self._spawn(self.launch)
            self._prestarted = True

    def _start(self, limit: float) -> None:
        """Start a worker. A notebook's cells run before it is ready: a cell that runs past its
        time or stops the process is skipped, and the worker started again without it. All its
        cells, every start of this one included, have ``limit`` seconds."""
        first = not self.started
        self._cells_until = time.monotonic() + limit
        while True:
            if not self._prestarted:
                self.launch = self.make_launch()
                self._spawn(self.launch)
            self._prestarted = False
            reply = self._wait(deadline=time.monotonic() + max(self.limits.cell_seconds, 30.0), per_cell=True)
            ready = reply.kind is ReplyKind.ANSWER and reply.message.get("event") == "ready"
            if not ready and time.monotonic() >= self._cells_until:
                self.kill()
                if not first:  # a restart: what was left of the budget is spent
                    raise NotebookStopped(reply.cell, budget=True)
                self.stopped = NotebookStopped(reply.cell, too_slow=True)
                raise self.stopped
            if ready:
                self.ready = reply.message
                if not self.started:  # the first run's outcomes: later runs are the same cells
                    self.started = True
                    self.cell_outcomes = reply.message.get("cells")
                    self.first_run_skipped = dict(self.skipped_cells)
                return
            self.kill()
            if reply.cell is None:
                # Nothing of the student's was running: a worker that cannot start is our fault.
                detail = f"{reply.kind.value}): {reply.detail} {reply.stderr[-2000:]}"
                raise GraderFault(f"the worker did not start ({detail}")
            if reply.cell in self.skipped_cells:
                self.stopped = NotebookStopped(reply.cell)  # skipping it did not help: the report is off
                raise self.stopped
            # A cell that wrote on the grader's channel (a frame, or bytes that are none) is the
            # student's doing like one that hung or crashed: skipped, and the worker started again.
            self.skipped_cells[reply.cell] = SKIP_REASONS.get(reply.kind, "channel")

    def _send(self, message: dict[str, Any], deadline: float) -> bool:
        """Send one message; False if the worker did not take it all by ``deadline``."""
        return write_before(self._req_w, protocol.frame(protocol.encode(message)), deadline)

    def kill(self) -> None:
        """Kill the worker and everything in its session; safe to call twice."""
        self._prestarted = False
        proc, self.proc = self.proc, None
        if proc is None:
            return
        proc.kill()
        if self.frames is not None:
            self.frames.close()
        if self._req_w >= 0:
            try:
                os.close(self._req_w)
            except OSError:
                pass
            self._req_w = -1

    def close(self) -> None:
        """End the worker when its submission is done: it exits by itself once its request pipe
        closes, so the CPU it used is accounted to the grading (a killed sandbox's is lost to
        ``getrusage``); one that does not exit at once is killed."""
        proc = self.proc
        if proc is not None and self._req_w >= 0:
            os.close(self._req_w)
            self._req_w = -1
            proc.wait(CLOSE_SECONDS)
        self.kill()

    # -- calls -----------------------------------------------------------------------------

    def _wait(self, deadline: float, nonce: str | None = None, per_cell: bool = False, grace: float = 0.0) -> Reply:
        """The reply to the call tagged ``nonce``. Frames carrying another tag were forged by
        the student's code (it can write to the response pipe) and are dropped, so forged
        answers can never be taken for the answers to later calls. With ``per_cell``, each
        notebook cell that starts gets the call's time limit of its own. ``grace``: how long
        past the deadline to wait for the worker's report of where it interrupted the call."""
        importing: str | None = None
        cell: int | None = None
        overtime = False
        while True:
            item = self.frames.next(deadline) if self.frames is not None else None
            if item is None and grace > 0 and not overtime:
                overtime, deadline = True, deadline + grace
                continue
            if item is None:
                self.kill()
                return Reply(ReplyKind.TIMEOUT, importing=importing, stderr=self._stderr.text(), cell=cell)
            kind, value = item
            if kind is FrameKind.FRAME:
                kind, value = _decoded(value)
            forged = nonce is not None and (not isinstance(value, dict) or value.get("nonce") != nonce)
            if kind is FrameKind.FRAME and forged:
                continue
            stopped = kind is FrameKind.FRAME and isinstance(value, dict) and value.get("status") == "stopped"
            if overtime or stopped:  # past the limit, whatever came: a timeout, the worker killed
                if kind is FrameKind.FRAME and value.get("event") in ("import_start", "import_done"):
                    continue
                self.kill()
                where = str(value.get("traceback", "")) if stopped else ""
                return Reply(ReplyKind.TIMEOUT, importing=importing, stderr=self._stderr.text(), where=where)
            if kind is FrameKind.EOF:
                return replace(self._ended(deadline, importing), cell=cell)
            if kind is FrameKind.INVALID or not isinstance(value, dict):
                self.kill()
                detail = str(value) if kind is FrameKind.INVALID else "the response is not a mapping"
                stderr = self._stderr.text()
                return Reply(ReplyKind.INVALID, detail=detail, importing=importing, stderr=stderr, cell=cell)
            if value.get("event") in ("import_start", "import_done"):
                importing = str(value.get("module")) if value["event"] == "import_start" else None
                continue
            if per_cell and value.get("event") == "cell_start":
                # The cell's number is the worker's word: only a cell we sent can be blamed.
                if value.get("cell") in self.cells:
                    cell = value["cell"]
                    deadline = time.monotonic() + self.limits.cell_seconds + CELL_GRACE_SECONDS
                    deadline = min(deadline, self._cells_until)
                continue
            return Reply(ReplyKind.ANSWER, message=value, importing=importing, cell=cell)

    def _not_taken(self) -> Reply:
        """The worker stopped reading before a call's request was all written: a timeout."""
        self.kill()
        return Reply(ReplyKind.TIMEOUT, stderr=self._stderr.text())

    def _ended(self, deadline: float, importing: str | None) -> Reply:
        """The worker closed its end: collect how it ended."""
        proc = self.proc
        code = None
        if proc is not None:
            code = proc.wait(max(0.0, min(2.0, deadline - time.monotonic())))
        self.kill()
        return Reply(ReplyKind.DIED, returncode=code, importing=importing, stderr=self._stderr.text())

    def call(
        self,
        function: str,
        args: list[Any],
        kwargs: dict[str, Any],
        seconds: float | None = None,
        start_seconds: float | None = None,
        interrupt: bool = True,
    ) -> Reply:
        """Run ``function(*args, **kwargs)`` in the worker, starting it if needed. A first start
        (a notebook's cells as Jupyter ran them) has ``Limits.notebook_seconds``; a restart after
        a crash or a timeout has ``start_seconds``, what is left of the submission's budget.
        ``interrupt``: at its limit the worker interrupts the call itself and says where it was,
        before it is killed (``Reply.where``)."""
        if self.stopped is not None:  # the notebook cannot start: starting it again would not help
            raise self.stopped.with_traceback(None)
        first = 0.0
        if self.proc is None or self._prestarted:
            began, fresh = time.monotonic(), not self.started
            self._start(self.limits.notebook_seconds if fresh or start_seconds is None else start_seconds)
            first = time.monotonic() - began if fresh else 0.0
        nonce = secrets.token_hex(16)
        # The call's limit counts from here: handing the request over is part of the call.
        limit = seconds or self.limits.call_seconds
        deadline = time.monotonic() + limit
        request = {"op": "call", "function": function, "args": args, "kwargs": kwargs, "nonce": nonce}
        grace = STOP_GRACE_SECONDS if interrupt else 0.0
        try:
            # The worker's own timer starts when the request is read, after this deadline's.
            delivered = self._send(request | ({"stop_after": limit} if interrupt else {}), deadline)
        except (BrokenPipeError, OSError):
            reply = self._wait(deadline=time.monotonic() + 2.0, nonce=nonce)
        else:
            reply = self._wait(deadline=deadline, nonce=nonce, grace=grace) if delivered else self._not_taken()
        reply.first_start_seconds = first
        return reply

    @property
    def stdout(self) -> str:
        return self._stdout.text()

    @property
    def stderr(self) -> str:
        return self._stderr.text()
