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
