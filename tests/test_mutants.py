"""Every realistic mistake loses points, and its feedback names the mistake where it can."""

import pytest
from helpers import failing, message_ids, patched
from mutants import MUTANTS

from grader.runner import Options, grade


@pytest.mark.parametrize(("name", "module", "old", "new", "hint"), MUTANTS, ids=[m[0] for m in MUTANTS])
def test_mutant_loses_points(tmp_path, name, module, old, new, hint):
    report = grade(patched(tmp_path / name, module, old, new), Options(suites=("hidden",)))
    assert report.score < report.max_score, f"{name} kept full marks"
    lost = failing(report)
    assert lost, name
    # The mistake lives in `module`; only that exercise and the ones that import it may suffer.
    assert {r.exercise for r in lost} <= {
        module,
        "residual",
        "stack",
        "compare",
        "gradient_path",
        "porting",
        "quantization",
    }
    if hint is not None:
        assert hint in message_ids(report), f"{name}: feedback never says {hint}"


PROPERTY_KEPT = [m for m in MUTANTS if m[0] in ("rms_eps_outside_sqrt", "ln_eps_outside_sqrt")]


@pytest.mark.parametrize(("name", "module", "old", "new", "hint"), PROPERTY_KEPT, ids=[m[0] for m in PROPERTY_KEPT])
def test_a_diagnosed_mistake_keeps_the_points_of_the_properties_it_respects(tmp_path, name, module, old, new, hint):
    """Decision 1: a property's points go to an answer that is right or matches a diagnosed
    mistake. One known mistake (eps outside the root) must not also cost "leaves its inputs
    unchanged"; trivial code never earns them (test_trivial.py)."""
    report = grade(
        patched(tmp_path / name, module, old, new), Options(suites=("hidden",), select="inputs_not_modified")
    )
    kept = [r for r in report.results if r.exercise == module and r.name.endswith("/test_inputs_not_modified")]
    assert kept and all(r.score == r.max_score > 0 for r in kept), [(r.name, r.status) for r in kept]
