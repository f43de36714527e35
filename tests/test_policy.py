"""The course's grading policy (``[policy]`` in normlab.toml): read by every path.

Unit tests of the policy itself, then the paths that must follow it: ``normlab grade``, a class
graded from a folder (re-scored, never re-graded, when the policy changes), the nbgrader
release's grade cells, and Gradescope's results. Real nbgrader runs are in test_nbgrader.py.
"""

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from grader import course, policy, questions
from grader.integrations.nbgrader import release
from grader.messages import Message
from grader.model import CheckResult, ManualPart, Report, Status, Visibility
from grader.policy import Policy, PolicyError
from grader.settings import SettingsError, load

ROOT = Path(__file__).resolve().parent.parent
NORMLAB = [sys.executable, "-m", "grader"]


def _result(exercise: str, name: str, score: float, most: float) -> CheckResult:
    status = Status.PASSED if score == most else Status.FAILED
    return CheckResult(f"{exercise}/hidden/{name}", exercise, name, Visibility.HIDDEN, status, score, most)


def _report() -> Report:
    results = (
        _result("rmsnorm", "a", 3, 3),
        _result("rmsnorm", "b", 0, 1),
        _result("layernorm", "a", 2, 2),
        _result("porting", "a", 5, 5),
        _result("q1", "part_a", 1, 1),
    )
    manual = (ManualPart("q1", 2, True), ManualPart("q2", 2, False))
    return Report("work", results, ("public", "hidden", "questions"), manual=manual)


# -- the policy itself ----------------------------------------------------------------------------


def test_the_default_policy_leaves_a_report_as_the_suites_scored_it():
    report = _report()
    assert policy.apply(report, Policy()) is report
    assert policy.manual_points(report) == 4


def test_an_item_is_scaled_to_its_points_and_keeps_its_partial_credit():
    counted = policy.apply(_report(), Policy(points={"rmsnorm": 20}))
    rms = [r for r in counted.results if r.exercise == "rmsnorm"]
    assert sum(r.max_score for r in rms) == pytest.approx(20)
    assert [r.score for r in rms] == [pytest.approx(15), 0]  # 3 of 4 points stays three quarters
    others = [r for r in counted.results if r.exercise != "rmsnorm"]
    assert [(r.score, r.max_score) for r in others] == [(2, 2), (5, 5), (1, 1)]
    assert counted.score == pytest.approx(15 + 2 + 5 + 1) and counted.max_score == pytest.approx(28)


def test_a_dropped_item_is_shown_worth_nothing_and_the_report_says_so():
    counted = policy.apply(_report(), Policy(drop=frozenset({"porting", "q2"})))
    porting = [r for r in counted.results if r.exercise == "porting"]
    assert porting and all(r.score == r.max_score == 0 for r in porting)
    assert counted.max_score == 3 + 1 + 2 + 1
    assert [m.question for m in counted.manual] == ["q1"]
    assert Message("policy.dropped", {"items": "porting"}) in counted.notes  # q2 has no automatic part here


def test_a_written_part_takes_the_policys_points():
    counted = policy.apply(_report(), Policy(written={"q1": 5}))
    assert [(m.question, m.max_score) for m in counted.manual] == [("q1", 5), ("q2", 2)]
    assert policy.manual_points(counted) == 7 and counted.max_score == _report().max_score


def test_the_fingerprint_changes_with_the_policy_and_only_with_it():
    one, same = Policy(points={"rmsnorm": 20, "q1": 2}), Policy(points={"q1": 2, "rmsnorm": 20})
    assert one.fingerprint() == same.fingerprint()
    others = [
        Policy(),
        Policy(points={"rmsnorm": 21, "q1": 2}),
        Policy(drop=frozenset({"q1"})),
        Policy(written={"q1": 2}),
    ]
    assert len({p.fingerprint() for p in [one, *others]}) == 5


@pytest.mark.parametrize(
    ("section", "says"),
    [
        ({"points": {"rmsnrom": 3}}, "rmsnrom"),
        ({"points": {"rmsnorm": -1}}, "0 or more"),
        ({"points": {"rmsnorm": "ten"}}, "must be a number"),
        ({"written": {"rmsnorm": 3}}, "rmsnorm"),  # only questions have written parts
        ({"drop": "porting"}, "must be a list"),
        ({"drop": ["q99"]}, "q99"),
        ({"weights": {}}, "unknown key"),
    ],
)
def test_a_policy_that_cannot_be_used_is_refused_with_the_key_named(section, says):
    with pytest.raises(PolicyError, match=says):
        policy.parse(section)


def test_the_course_file_carries_the_policy_and_names_itself_when_wrong(tmp_path):
    course_file = tmp_path / "normlab.toml"
    course_file.write_text('[policy]\ndrop = ["porting"]\n\n[policy.points]\nlayernorm = 20\nq3 = 4\n')
    settings = load(environ={}, course_file=course_file)
    assert settings.policy == Policy(points={"layernorm": 20, "q3": 4}, drop=frozenset({"porting"}))
    course_file.write_text("[policy.points]\nlayer_norm = 20\n")
    with pytest.raises(SettingsError, match=rf"{course_file}.*layer_norm"):
        load(environ={}, course_file=course_file)


# -- the release writes the policy's points -----------------------------------------------------


POLICY = Policy(points={"layernorm": 20, "q3": 4}, written={"q1": 5}, drop=frozenset({"porting", "q9"}))


def _grade_cells(nb) -> dict[str, float]:
    return {
        c.metadata["nbgrader"]["grade_id"]: c.metadata["nbgrader"]["points"]
        for c in nb.cells
        if c.metadata.get("nbgrader", {}).get("grade")
    }


def test_the_release_writes_the_policys_points_into_its_grade_cells():
    default, chosen = _grade_cells(release.build_notebook()), _grade_cells(release.build_notebook(course_policy=POLICY))
    assert chosen["layernorm-public"] + chosen["layernorm-hidden"] == pytest.approx(20)
    share = default["layernorm-public"] / (default["layernorm-public"] + default["layernorm-hidden"])
    assert chosen["layernorm-public"] == pytest.approx(20 * share, abs=1e-6)  # public and hidden keep their shares
    assert chosen["q3-auto"] == 4 and chosen["q1-answer"] == 5
    dropped = {"porting-public", "porting-hidden", "q9-auto", "q9-answer"}
    assert dropped <= default.keys() and all(chosen[k] == 0 for k in dropped)  # kept, worth 0
    untouched = default.keys() - dropped - {"layernorm-public", "layernorm-hidden", "q3-auto", "q1-answer"}
    assert all(chosen[k] == default[k] for k in untouched)
    assert release.policy_mismatch(release.build_notebook(course_policy=POLICY), POLICY) is None
    mismatch = release.policy_mismatch(release.build_notebook(), POLICY)
    assert mismatch is not None and "layernorm-hidden" in mismatch


def test_the_scaled_cells_say_so_and_scale_what_they_return():
    nb = release.build_notebook(course_policy=POLICY)
    source = {c.metadata.get("nbgrader", {}).get("grade_id"): c.source for c in nb.cells}
    assert "scale=" in source["layernorm-hidden"] and "round(_run_public(" in source["layernorm-public"]
    assert "scale=" not in source["rmsnorm-hidden"] and "not counted" in source["porting-hidden"]
    assert "scale=0" in source["porting-hidden"] and "* 0.0" in source["porting-public"]
    assert "scale=" in source["q3-auto"]


def test_the_rubric_is_scaled_with_the_written_part():
    text = release.question_cells.rubric_markdown(POLICY)
    bank = questions.load()
    q1 = bank.question("q1").written
    assert f"## q1 ({bank.groups[bank.question('q1').group]['en']}, 5 points)" in text
    first = q1.rubric[0]
    assert f"({first.points * 5 / q1.points:g} pt) {first.text}" in text
    assert "## q9" not in text


# -- normlab grade, a class from a folder -------------------------------------------------------


def run(*args, cwd=ROOT):
    return subprocess.run(
        [*NORMLAB, *map(str, args)], capture_output=True, text=True, cwd=cwd, env=dict(os.environ), timeout=600
    )


def test_normlab_grade_counts_as_the_course_file_says(tmp_path):
    course_file = tmp_path / "normlab.toml"
    course_file.write_text('[policy]\ndrop = ["porting"]\n\n[policy.points]\nlayernorm = 20\n')
    plain = json.loads(run("grade", "solutions", "--json").stdout)
    counted = run("grade", "solutions", "--json", "--course-file", course_file)
    assert counted.returncode == 0, counted.stderr
    data = json.loads(counted.stdout)
    by = {ex: sum(t["max_score"] for t in data["tests"] if t["exercise"] == ex) for ex in ("layernorm", "porting")}
    raw = {ex: sum(t["max_score"] for t in plain["tests"] if t["exercise"] == ex) for ex in ("layernorm", "porting")}
    assert by == {"layernorm": pytest.approx(20), "porting": 0}
    assert data["max_score"] == pytest.approx(plain["max_score"] - raw["layernorm"] + 20 - raw["porting"])
    assert data["score"] == pytest.approx(data["max_score"])
    text = run("grade", "solutions", "--course-file", course_file, "--lang", "en").stdout
    assert "Not counted in this course" in text and "porting" in text
    wrong = tmp_path / "wrong.toml"
    wrong.write_text("[policy.points]\nlayer_norm = 20\n")
    refused = run("grade", "solutions", "--course-file", wrong)
    assert refused.returncode == 2 and "layer_norm" in refused.stderr


def test_a_new_policy_rescores_a_folder_class_without_grading_again(tmp_path):
    handed_in, out_dir = tmp_path / "handed-in", tmp_path / "out"
    (handed_in / "alice").mkdir(parents=True)
    for module in course.MODULES:
        shutil.copy(course.solutions_dir() / f"{module}.py", handed_in / "alice" / f"{module}.py")
    shutil.copy(course.solutions_dir() / questions.ANSWERS_FILE, handed_in / "alice" / questions.ANSWERS_FILE)
    (handed_in / "bob.py").write_text("import numpy as np\n")
    course_file = tmp_path / "normlab.toml"
    course_file.write_text("")
    first = run("grade-class", handed_in, "-o", out_dir, "--no-progress", "--course-file", course_file)
    assert first.returncode == 0 and "2 graded" in first.stdout, first.stdout + first.stderr
    stored = sorted(tmp_path.rglob("reports/*.json"))
    stamps = {p: p.stat().st_mtime_ns for p in stored}
    assert len(stamps) == 2

    def grades() -> dict[str, list[str]]:
        import csv

        with open(out_dir / "grades.csv", newline="") as handle:
            return {row[0]: row[1:] for row in list(csv.reader(handle))[1:]}

    before = grades()
    course_file.write_text("[policy.points]\nrmsnorm = 100\n")
    second = run("grade-class", handed_in, "-o", out_dir, "--no-progress", "--course-file", course_file)
    assert "0 graded" in second.stdout and "2 re-scored" in second.stdout, second.stdout + second.stderr
    after = grades()
    plain = json.loads(run("grade", "solutions", "--json").stdout)
    rms = sum(t["max_score"] for t in plain["tests"] if t["exercise"] == "rmsnorm")
    assert float(after["alice"][1]) == pytest.approx(float(before["alice"][1]) - rms + 100)
    assert after["alice"][0] == after["alice"][1] and after["bob"][0] == "0"
    assert "100" in (out_dir / "feedback" / "alice.html").read_text()
    assert {p: p.stat().st_mtime_ns for p in stored} == stamps  # the sandbox never ran again
    third = run("grade-class", handed_in, "-o", out_dir, "--no-progress", "--course-file", course_file)
    assert "0 graded, 2 unchanged" in third.stdout and "re-scored" not in third.stdout
    # Regrading one student without the course file keeps the class's policy (a trial's
    # `--student erin` re-scored the whole class under the defaults).
    one = run("grade-class", handed_in, "-o", out_dir, "--no-progress", "--student", "bob")
    assert one.returncode == 0 and "the class's own" in one.stdout, one.stdout + one.stderr
    assert grades() == after


def test_the_released_course_file_lists_every_items_points_ready_to_uncomment(tmp_path):
    from grader.report import jinja

    values = {"floors": {"call": 3, "submission": 30}, "multiples": {"call": 50, "submission": 30}}
    values |= {"calibration": None, "reason": "not measured here", "call_seconds": 10.0, "submission_seconds": 60.0}
    text = jinja.render("normlab.toml.j2", **values, **release._default_points())
    cells = _grade_cells(release.build_notebook())
    for exercise in course.EXERCISES:
        assert f"# {exercise} = {cells[f'{exercise}-public'] + cells[f'{exercise}-hidden']:g}\n" in text
    course_file = tmp_path / "normlab.toml"
    course_file.write_text(text)
    assert load(environ={}, course_file=course_file).policy == Policy()
    course_file.write_text(text.replace("# layernorm = ", "layernorm = 2 * 0 + "))
    with pytest.raises(SettingsError):  # not a number: refused, with the file named
        load(environ={}, course_file=course_file)
    course_file.write_text(
        text.replace(f"# layernorm = {cells['layernorm-public'] + cells['layernorm-hidden']:g}", "layernorm = 20")
    )
    assert load(environ={}, course_file=course_file).policy == Policy(points={"layernorm": 20})


def test_a_portuguese_course_releases_its_questions_in_portuguese(tmp_path):
    """Trial 49: a pt-BR course's notebook had every question, option and answer hint in
    English, while its feedback quoted the questions in Portuguese. The questions follow the
    course file's language; a new course file takes the release's language."""
    nb = release.build_notebook(lang="pt-BR")
    text = "\n".join("".join(c["source"]) for c in nb.cells)
    bank = questions.load()
    assert bank.questions[0].text["pt-BR"] in text and bank.questions[0].text["en"] not in text
    assert "Perguntas de verificação" in text and "uma lista de letras" in text
    assert "Answer the parts above" not in text and "your answers to the auto-graded parts" not in text
    english = "\n".join("".join(c["source"]) for c in release.build_notebook().cells)
    assert "Answer the parts above" in english
    # Trial 57: the notebook's own words around the exercises were English in a pt-BR course.
    for said in (
        "This notebook is the lab",
        "## Exercise ",
        "# Public tests for",
        "# Hidden tests for",
        "# Question 1:",
    ):
        assert said in english and said not in text, said
    for said in ("Este notebook é o lab", "## Exercício 2: `residual.py`", "# Testes públicos de rmsnorm: 4 ponto(s)"):
        assert said in text, said
    assert "# Testes ocultos de rmsnorm:" in text and "# Pergunta 1: " in text and "# Preparação dos testes" in text
    # nbgrader's own autograde runs the hidden and question cells in the kernel: in the course's language too
    assert (
        'run_hidden("rmsnorm", globals(), lang="pt-BR")' in text
        and 'score_answers("q1", globals(), lang="pt-BR")' in text
    )
    assert 'run_hidden("rmsnorm", globals())' in english and "lang=" not in english.split("_run_public_tests")[-1]
    written = release.write_course(tmp_path / "new", lang="pt-BR")
    assert 'language = "pt-BR"' in (tmp_path / "new" / "normlab.toml").read_text()
    assert not written.notes
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "normlab.toml").write_text('[grading]\nlanguage = "pt-BR"\n')
    kept = release.write_course(mine)  # the instructor's file: kept, and its language is the notebook's
    assert (mine / "normlab.toml").read_text() == '[grading]\nlanguage = "pt-BR"\n'
    source = (mine / "source" / "normlab" / "lab.ipynb").read_text()
    assert "Perguntas de verificação" in source
    assert [n.id for n in kept.notes] == ["release.limits_not_calibrated"]
    unnamed = tmp_path / "unnamed"  # trial 50: a course file that names no language takes --lang
    unnamed.mkdir()
    (unnamed / "normlab.toml").write_text("[grading]\nrequire_sandbox = false\n")
    release.write_course(unnamed, lang="pt-BR")
    assert "Perguntas de verificação" in (unnamed / "source" / "normlab" / "lab.ipynb").read_text()


def test_the_setup_cell_runs_the_public_tests_with_an_older_normlab_installed(monkeypatch):
    """Trial 50: the setup cell passed ``lang`` to run_public, and a student's older normlab
    (whose run_public takes none) made every public test cell raise TypeError."""
    import types

    from grader.report import jinja

    seen = []
    older = types.ModuleType("grader.public")
    older.run_public = lambda tests, namespace: seen.append(tests) or 0.0
    monkeypatch.setitem(sys.modules, "grader.public", older)
    namespace: dict = {}
    exec(jinja.render("setup_cell.py.j2", lang="pt-BR"), namespace)
    assert namespace["_run_public"](["a test"]) == 0.0 and seen == [["a test"]]


def test_the_notebook_numbers_its_exercises_as_the_lab_does():
    """Trial 57: the notebook's Exercise 2 was layernorm, where the lab page's step 2 and the
    module's own docstring ("Lab step 2") say residual."""
    text = "\n".join("".join(c["source"]) for c in release.build_notebook().cells)
    headers = re.findall(r"^## Exercise (\d+): `(\w+)\.py`", text, re.MULTILINE)
    lab_page = (course.PACKAGE.parent / "site" / "lab" / "index.md").read_text(encoding="utf-8")
    steps = re.findall(r"^\| (\d+) \| \[`(\w+)\.py`\]", lab_page, re.MULTILINE)
    assert headers == steps and len(headers) == len(course.EXERCISES), (headers, steps)
    for number, module in headers:
        source = (course.solutions_dir() / f"{module}.py").read_text(encoding="utf-8")
        assert f"Lab step {number} " in source or "Lab step" not in source, module
