"""``normlab doctor``: check each isolation layer by running a probe in a real worker.

Nothing here trusts the configuration alone: a probe module is graded like a submission, in
the same sandbox, and what it observes from inside (its uid, its PID, the network devices,
the file system it can see, whether ``fork`` works, its capabilities, its rlimits) decides
whether each layer is really active.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from grader import course
from grader.sandbox import policy, slots
from grader.sandbox.client import ReplyKind, Worker
from grader.sandbox.limits import Limits
from grader.settings import Settings

PROBE = """
import os, resource, socket

def probe(secrets):
    seen = {"uid": os.getuid(), "pid": os.getpid()}
    with open("/proc/self/status") as status:
        fields = dict(line.split(":", 1) for line in status if ":" in line)
    seen["cap_eff"] = fields.get("CapEff", "").strip()
    seen["seccomp_mode"] = fields.get("Seccomp", "").strip()
    with open("/proc/net/dev") as dev:
        seen["interfaces"] = sorted(line.split(":")[0].strip() for line in dev.readlines()[2:])
    seen["visible_secrets"] = [path for path in secrets if os.path.exists(path)]
    # Any copy of the grader importable from here (an installed wheel, an editable install's
    # copy of the course) would hand the student the hidden suites or the reference.
    import sys
    for entry in sys.path:
        for part in ("grader/suites", "grader/_course"):
            if os.path.isdir(os.path.join(entry, part)):
                seen["visible_secrets"].append(os.path.join(entry, part))
    seen["root_entries"] = sorted(os.listdir("/"))
    import importlib.util
    seen["prefix"] = sys.prefix
    seen["grader_importable"] = importlib.util.find_spec("grader") is not None
    try:
        pid = os.fork()
        if pid == 0:
            os._exit(0)
        os.waitpid(pid, 0)
        seen["fork"] = "allowed"
    except OSError as exc:
        seen["fork"] = exc.strerror
    try:
        socket.socket().close()
        seen["socket"] = "allowed"
    except OSError as exc:
        seen["socket"] = exc.strerror
    seen["rlimit_as"] = list(resource.getrlimit(resource.RLIMIT_AS))
    seen["rlimit_cpu"] = list(resource.getrlimit(resource.RLIMIT_CPU))
    seen["rlimit_core"] = list(resource.getrlimit(resource.RLIMIT_CORE))
    return seen

def sleep():
    import time
    time.sleep(60)
"""


@dataclass(frozen=True)
class LayerStatus:
    name: str
    active: bool
    detail: str


def _secrets() -> list[str]:
    """Paths a student must never see: the hidden suites and the reference solutions."""
    return [str(course.suites_dir()), str(course.solutions_dir()), str(course.suites_dir() / "test_rmsnorm.py")]


def _judge(name: str, seen: dict[str, Any], limits: Limits, grader_pid: int) -> tuple[bool, str]:
    if name == "process":
        return seen["pid"] != grader_pid, f"worker pid {seen['pid']} (grader {grader_pid}); data-only channel"
    if name == "rlimits":
        ok = seen["rlimit_as"][0] == limits.memory_bytes and seen["rlimit_core"] == [0, 0]
        soft, hard = seen["rlimit_cpu"]
        return ok, f"address space {seen['rlimit_as'][0] >> 20} MiB, CPU {soft} s (killed at {hard} s), no core files"
    if name == "namespaces":
        isolated = seen["interfaces"] == ["lo"] and seen["pid"] <= 3 and not seen["visible_secrets"]
        return isolated, (
            f"pid {seen['pid']}, network devices {seen['interfaces']}, "
            f"hidden suites visible: {bool(seen['visible_secrets'])}, / holds {seen['root_entries']}"
        )
    if name == "unprivileged-uid":
        ok = seen["uid"] != 0 and seen["cap_eff"].strip("0") == ""
        return ok, f"uid {seen['uid']}, effective capabilities {seen['cap_eff']}"
    if name == "seccomp":
        ok = seen["seccomp_mode"] == "2" and seen["fork"] != "allowed" and seen["socket"] != "allowed"
        return ok, f"seccomp mode {seen['seccomp_mode']}, fork: {seen['fork']}, socket: {seen['socket']}"
    if name == "own-environment":
        ok = not seen["grader_importable"]
        return ok, f"interpreter environment {seen['prefix']}, grader importable: {seen['grader_importable']}"
    raise ValueError(name)


def diagnose(settings: Settings) -> list[LayerStatus]:
    """Run the probe in the strongest sandbox available and judge every layer."""
    limits = Limits(call_seconds=1.0)
    settings = settings.replace(limits=limits, require_sandbox=False)
    directory = Path(tempfile.mkdtemp(prefix="normlab-probe-"))
    directory.chmod(0o755)
    (directory / "probe.py").write_text(PROBE)
    (directory / "probe.py").chmod(0o644)
    lease = slots.lease(settings.slot_dir)
    slot = lease.__enter__()
    # The same start as a grading's: forked from the slot's warm zygote where gradings are.
    plan = policy.plan(directory, settings, slot=slot.number, warm=settings.warm_sandbox)
    warm = plan.launcher().zygote is not None
    worker = Worker(plan.launcher, {"modules": {"probe": "probe", "sleep": "probe"}, "single": None}, limits)
    try:
        reply = worker.call("probe", [_secrets()], {}, seconds=30.0)
        started = time.monotonic()
        # The layer is the kill: the worker is not asked to stop the call itself.
        stalled = worker.call("sleep", [], {}, seconds=limits.call_seconds, interrupt=False)
        waited = time.monotonic() - started
    finally:
        worker.close()
        plan.cleanup()
        lease.__exit__(None, None, None)
        shutil.rmtree(directory, ignore_errors=True)
    if reply.kind is not ReplyKind.ANSWER or reply.message.get("status") != "ok":
        detail = f"the probe did not answer: {reply.kind.value} {reply.message.get('status')} {reply.stderr[-500:]}"
        return [LayerStatus(name, False, detail) for name in policy.ALL_LAYERS]
    seen = reply.message["result"]
    statuses = []
    for name in policy.ALL_LAYERS:
        if name == "wall-clock":
            ok = stalled.kind is ReplyKind.TIMEOUT and waited < limits.call_seconds + 5
            statuses.append(LayerStatus(name, ok, f"a sleeping call was killed after {waited:.1f} s"))
        elif name in plan.missing:
            statuses.append(LayerStatus(name, False, plan.missing[name]))
        else:
            active, detail = _judge(name, seen, limits, os.getpid())
            if name == "process" and warm:
                detail += "; a fresh copy (fork) of the slot's warm sandbox, the slot checked empty after it"
            statuses.append(LayerStatus(name, active, detail))
    return statuses
