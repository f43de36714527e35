"""Worker slots: unique per concurrent grading on a host, freed when their holder dies."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

from grader.faults import GraderFault
from grader.sandbox import slots

HOLD = """
import sys, time
from pathlib import Path
from grader.sandbox import slots
slot = slots.claim(Path(sys.argv[1]))
print(slot.number, flush=True)
time.sleep(60)
"""


def test_claims_are_distinct_until_released(tmp_path):
    first, second = slots.claim(tmp_path), slots.claim(tmp_path)
    assert {first.number, second.number} == {0, 1}
    first.release()
    with slots.claim(tmp_path) as third:
        assert third.number == 0
    second.release()


def test_processes_holding_slots_get_distinct_ones_and_a_killed_holder_frees_its_own(tmp_path):
    holders = [
        subprocess.Popen([sys.executable, "-c", HOLD, str(tmp_path)], stdout=subprocess.PIPE, text=True)
        for _ in range(3)
    ]
    try:
        numbers = [int(h.stdout.readline()) for h in holders]
        assert sorted(numbers) == [0, 1, 2]
        victim = holders[numbers.index(1)]
        victim.kill()
        victim.wait()
        with slots.claim(tmp_path) as slot:
            assert slot.number == 1  # the kernel dropped the dead holder's lock
    finally:
        for holder in holders:
            holder.kill()
            holder.wait()
            holder.stdout.close()


def test_all_slots_taken_is_a_grader_fault(tmp_path):
    held = [slots.claim(tmp_path, count=2) for _ in range(2)]
    with pytest.raises(GraderFault, match="in use"):
        slots.claim(tmp_path, count=2)
    for slot in held:
        slot.release()


def test_a_slot_directory_others_can_write_or_a_symlink_is_refused(tmp_path):
    shared = tmp_path / "shared"
    shared.mkdir(mode=0o777)
    shared.chmod(0o777)
    with pytest.raises(GraderFault, match="not a private directory"):
        slots.claim(shared)
    link = tmp_path / "link"
    link.symlink_to(tmp_path / "elsewhere")
    (tmp_path / "elsewhere").mkdir()
    with pytest.raises(GraderFault, match="not a private directory"):
        slots.claim(link)


def test_concurrent_cli_gradings_run_as_different_uids(tmp_path):
    """Two ``normlab grade`` at once: each claims its own slot, so each worker has its own uid."""
    if os.geteuid() != 0:
        pytest.skip("workers get their own uid only when the grader runs as root")
    slow = tmp_path / "slow.py"
    slow.write_text(
        "import time\nimport numpy as np\n\ndef rmsnorm(x, gamma, eps=1e-6):\n    time.sleep(0.5)\n"
        "    return x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + eps) * gamma\n"
    )
    env = {**os.environ, "NORMLAB_SLOT_DIR": str(tmp_path / "slots")}
    command = [sys.executable, "-m", "grader", "grade", str(slow), "--public-only", "--json", "-k", "rmsnorm"]
    runs = [subprocess.Popen(command, stdout=subprocess.PIPE, text=True, env=env) for _ in range(2)]
    time.sleep(0.1)
    import json

    uids = {json.loads(run.communicate(timeout=300)[0])["isolation"]["uid"] for run in runs}
    assert len(uids) == 2 and None not in uids, uids
