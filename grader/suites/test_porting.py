"""Hidden tests for porting.py. Docstrings are what the student sees; ports stay here.

The student's ``probes()`` answer crosses the channel once per test; the reference block and each
port (``reference.forward`` with parameters drawn here) run in this, trusted, process; only the
outputs, as plain float64 arrays, cross back into ``diagnose``. Every test holds ports of at least
two different kinds, so no constant label passes one (Decision 1).
"""

from typing import Any

import numpy as np
import pytest

from grader.checks import Mismatch, describe_type, expect_value
from grader.messages import Message
from grader.proxy import StudentProxy
from grader.reference import Reference

WIDTH, MAX_PROBES, MAX_ROWS = 16, 16, 64
LABELS = ("norm_type", "eps", "placement", "offset_gain", "missing_final_norm", "residual_on_normalized", "match")
WHAT = "diagnose(probes, reference_outputs, port_outputs)"

Setup = dict[str, float]
CASES: dict[str, list[tuple[str, Setup]]] = {
    "every_kind": [(label, {}) for label in LABELS],
    "other_eps": [
        ("eps", {"eps": 1e-6, "port_eps": 1e-8}),
        ("eps", {"eps": 1e-5, "port_eps": 1e-3}),
        ("match", {"eps": 1e-3}),
        ("norm_type", {"eps": 1e-8}),
    ],
    "unit_gains": [
        ("placement", {"spread": 0.0}),
        ("offset_gain", {"spread": 0.0}),
        ("norm_type", {"spread": 0.0}),
        ("eps", {"spread": 0.0, "port_eps": 1e-4}),
        ("match", {"spread": 0.0}),
    ],
    "strong_sublayer": [
        ("residual_on_normalized", {"scale": 3.0, "bias": 0.2}),
        ("missing_final_norm", {"scale": 3.0, "bias": 0.2}),
        ("placement", {"scale": 3.0, "bias": 0.2}),
        ("offset_gain", {"scale": 3.0, "bias": 0.2, "center": 0.3, "spread": 0.1}),
        ("eps", {"scale": 3.0, "bias": 0.2, "eps": 1e-3, "port_eps": 1e-6}),
        # Gains around 0, some negative (weights stored as Gemma stores them), and large gains:
        # an offset gain need not make every channel larger ((1 + w) / w < 1 for w < 0), and
        # for large gains it changes them little ((1 + w) / w about 1.25 for w about 4).
        ("offset_gain", {"scale": 3.0, "bias": 0.2, "center": 0.0, "spread": 0.3}),
        ("offset_gain", {"scale": 3.0, "bias": 0.2, "center": 4.0, "spread": 1.0}),
        ("placement", {"scale": 3.0, "bias": 0.2, "center": 0.0, "spread": 0.3}),
    ],
}
"""Test -> its ports: (the mismatch, how the parameters are drawn). Never sent anywhere."""


def draw(rng: np.random.Generator, setup: Setup) -> dict[str, Any]:
    """The reference block's parameters (and an eps port's eps) for one port."""
    center, spread = setup.get("center", 1.0), setup.get("spread", 0.3)
    eps = setup.get("eps", 1e-6)
    return {
        "eps": eps,
        "port_eps": setup.get("port_eps", eps * 10.0),
        "weight_1": center + spread * rng.standard_normal(WIDTH),
        "weight_f": center + spread * rng.standard_normal(WIDTH),
        "w": rng.standard_normal((WIDTH, WIDTH)) * (setup.get("scale", 1.0) / np.sqrt(WIDTH)),
        "b": setup.get("bias", 1.0) * rng.standard_normal(WIDTH),
    }


def usable_probes(answer: Any) -> list[np.ndarray]:
    """The student's probes as trusted float64 copies; anything else is a scored failure."""
    if not isinstance(answer, (list, tuple)):
        raise Mismatch([Message("check.probes_not_list", {"type": describe_type(answer)})])
    if not 1 <= len(answer) <= MAX_PROBES:
        raise Mismatch([Message("check.probes_count", {"limit": MAX_PROBES})])
    form = Message("check.probe_form", {"width": WIDTH, "rows": MAX_ROWS})
    for probe in answer:
        if not (
            type(probe) is np.ndarray
            and probe.dtype == np.float64
            and probe.ndim == 2
            and probe.shape[1] == WIDTH
            and 1 <= probe.shape[0] <= MAX_ROWS
            and bool(np.all(np.isfinite(probe)))
        ):
            raise Mismatch([form])
    return [np.array(probe, dtype=np.float64, copy=True) for probe in answer]


def rounded(output: Any, rng: np.random.Generator) -> np.ndarray:
    """A port's output as another framework would round it: a few units in the last place off."""
    out = np.asarray(output, dtype=np.float64)
    return np.asarray(out * (1.0 + 4e-16 * rng.standard_normal(out.shape)))


def hints(truth: str) -> list[tuple[str, str]]:
    """(a wrong label, the hint it earns): one hint for every wrong label. A hint naming the
    port's kind would tell a hidden port's answer: a diagnose that counts its own calls learned
    every port's label in a few gradings and answered from a table."""
    return [(label, "hint.porting_wrong_label") for label in LABELS if label != truth]


def detect(student: StudentProxy, reference: Reference, rng: np.random.Generator, case: str) -> None:
    """Every port of ``case``, diagnosed from the outputs on the student's own probes."""
    probes = usable_probes(student.probes())
    for truth, setup in CASES[case]:
        params = draw(rng, setup)
        # The probes are the student's: answered by the reference, never kept in its cache.
        ref = [np.asarray(reference.uncached.forward(p, params), dtype=np.float64) for p in probes]
        port = [rounded(reference.uncached.forward(p, params, truth), rng) for p in probes]
        label = student.diagnose([p.copy() for p in probes], ref, port)
        if isinstance(label, str) and label not in LABELS:
            raise Mismatch([Message("check.porting_label")])
        expect_value(label, truth, what=WHAT, hints=hints(truth))


@pytest.mark.points(3)
def test_ports_of_every_kind(student: StudentProxy, reference: Reference, rng: np.random.Generator) -> None:
    """One port of each kind (and one without mismatch), with weights and gains you have not seen."""
    detect(student, reference, rng, "every_kind")


@pytest.mark.points(2)
def test_ports_with_other_eps_values(student: StudentProxy, reference: Reference, rng: np.random.Generator) -> None:
    """eps ports with other eps values (smaller and larger than the reference's), among other ports."""
    detect(student, reference, rng, "other_eps")


@pytest.mark.points(2)
def test_ports_with_unit_gains(student: StudentProxy, reference: Reference, rng: np.random.Generator) -> None:
    """Ports of an untrained block: every gain 1, as at initialization."""
    detect(student, reference, rng, "unit_gains")


@pytest.mark.points(2)
def test_ports_with_a_strong_sublayer(student: StudentProxy, reference: Reference, rng: np.random.Generator) -> None:
    """Ports of a block whose sublayer has large weights and a small bias, and gains far from 1 (around 0, some
    negative, or large)."""
    detect(student, reference, rng, "strong_sublayer")
