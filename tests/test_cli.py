"""The normlab command through its real entry point: exit codes and output."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from helpers import notebook_answer_cell

from grader import course
from grader.course import MODULES

ROOT = Path(__file__).resolve().parent.parent
NORMLAB = [sys.executable, "-m", "grader"]


def run(*args, env=None, cwd=ROOT):
    return subprocess.run(
        [*NORMLAB, *map(str, args)],
        capture_output=True,
        text=True,
        cwd=cwd,
        env={**os.environ, **(env or {})},
        timeout=600,
    )


def test_grade_reference_json_full_marks():
    out = run("grade", "solutions", "--json")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["score"] == data["max_score"] > 100
    assert all(t["status"] == "passed" for t in data["tests"])


def test_grade_stubs_json_zero_and_exit_zero():
    out = run("grade", "exercises", "--json")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["score"] == 0
    exercises = [t for t in data["tests"] if t["exercise"] in MODULES]
    assert all("not implemented yet" in t["output"] for t in exercises)
    # The blank answers file: every question's auto-graded part is unanswered, not an error.
    assert all("not answered yet" in t["output"] for t in data["tests"] if t not in exercises)
    assert [m["answered"] for m in data["manual"]] == [False] * len(data["manual"]) != []


def test_grade_text_report_in_portuguese():
    out = run("grade", "exercises", "--lang", "pt-BR", "-k", "test_sequence_of_tokens")
    assert out.returncode == 0
    assert "ainda não foi implementada" in out.stdout and "Total: 0/" in out.stdout


def test_gradescope_results_file(tmp_path):
    target = tmp_path / "results.json"
    out = run("grade", "solutions", "--format", "gradescope", "-o", target)
    assert out.returncode == 0 and out.stdout == ""
    data = json.loads(target.read_text())
    assert data["score"] == sum(t["max_score"] for t in data["tests"])
    assert {t["status"] for t in data["tests"]} == {"passed"}


def test_csv_format():
    out = run("grade", "solutions", "--format", "csv", "--public-only")
    lines = out.stdout.strip().splitlines()
    assert lines[0] == "name,exercise,visibility,status,score,max_score"
    assert lines[-1].startswith("TOTAL,")


def test_check_exit_codes():
    assert run("check", "solutions").returncode == 0
    failing = run("check", "exercises")
    assert failing.returncode == 1
    assert "hidden tests were not run" in failing.stdout


def test_usage_errors_exit_2():
    assert run("grade", "no/such/path").returncode == 2
    assert run("grade", "solutions", "--json", "--format", "csv").returncode == 2
    assert run("grade").returncode == 2


def test_stubs_check_in_sync():
    out = run("stubs", "--check")
    assert out.returncode == 0, out.stdout


def test_a_grader_fault_exits_3_without_a_score(tmp_path):
    broken = tmp_path / "test_rmsnorm.py"
    broken.write_text("def test_bug(student):\n    return 1 / 0\n")
    code = (
        "import sys; from pathlib import Path; import grader.course as p; "
        f"p.hidden_tests = lambda: [Path({str(broken)!r})]; "
        "from grader.cli import run; sys.argv = ['normlab', 'grade', 'solutions', '--json']; run()"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=600)
    assert out.returncode == 3
    assert out.stdout == "" and "grader fault" in out.stderr


def test_course_paths_resolve_to_this_checkout():
    assert course.course_root() == ROOT


def test_help_lists_every_command_with_its_whole_summary_and_the_exit_codes():
    out = run("--help")
    assert out.returncode == 0
    commands = out.stdout.split("Commands:")[1]
    rows = [line.split(None, 1) for line in commands.splitlines() if line.startswith("  ") and line.split()]
    summaries = {row[0]: row[1] for row in rows if len(row) == 2 and row[0].isalpha()}
    assert set(summaries) >= {"check", "grade", "release", "autograde", "gradescope", "doctor", "bench", "stubs"}
    assert not [s for s in summaries.values() if s.endswith("...")], summaries
    words = " ".join(out.stdout.split())
    assert "Exit codes:" in words and "3 grader fault, no score issued" in words
    assert "Exit codes:" in run("grade", "--help").stdout


def test_numeric_options_are_validated_as_usage_errors():
    for args in (("bench", "--rounds", "0"), ("autograde", "lab", "--jobs", "0")):
        out = run(*args)
        assert out.returncode == 2, (args, out.stderr)
        assert "Invalid value" in out.stderr


def test_every_command_that_writes_a_report_takes_dash_o(tmp_path):
    target = tmp_path / "check.txt"
    out = run("check", "solutions", "-o", target)
    assert out.returncode == 0, out.stderr
    assert "Total:" in target.read_text() and out.stdout == ""
    for command in ("grade", "check", "doctor", "bench", "gradescope"):
        assert "-o, --output" in run(command, "--help").stdout, command


def test_check_without_a_path_grades_the_folder_you_are_in(tmp_path):
    work = tmp_path / "my-lab"
    shutil.copytree(ROOT / "exercises", work)
    (work / "rmsnorm.py").write_text((ROOT / "solutions" / "rmsnorm.py").read_text())
    out = run("check", "-k", "rmsnorm", cwd=work)
    assert f"grading {work} (public tests)" in out.stdout and "Total: 4/4" in out.stdout  # theirs, solved
    assert out.stdout.count(str(work)) == 1  # one header line names the folder
    assert out.returncode == 0, out.stdout + out.stderr


def test_a_k_that_matches_no_test_is_the_users_typo_not_a_grader_fault():
    # Trial 57: "-k rmsnrom" exited 3, "grader fault (no score issued)", which the docs say to
    # report to the instructor.
    for lang, words in (("en", "No test matches -k rmsnrom"), ("pt-BR", "Nenhum teste corresponde a -k rmsnrom")):
        out = run("check", "exercises", "-k", "rmsnrom", "--lang", lang)
        assert out.returncode == 2 and words in out.stderr and "grader fault" not in out.stderr, out.stderr
    out = run("grade", "solutions", "-k", "q2", "--lang", "en")
    assert out.returncode == 2 and "No test matches -k q2" in out.stderr, out.stderr


def test_check_without_a_path_and_no_exercise_files_here_is_a_usage_error(tmp_path):
    out = run("check", cwd=tmp_path)
    assert out.returncode == 2 and "no exercise files" in out.stderr


def test_check_without_a_path_beside_a_notebook_checks_the_notebook(tmp_path):
    """A pt-BR student ran ``normlab check --lang pt-BR`` beside their lab.ipynb and got an
    English usage error that did not mention the notebook: the notebook that holds the work
    is checked, and said; with nothing at all, the error is in the student's language."""
    empty_notebook = {"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    (tmp_path / "copia_vazia.ipynb").write_text(json.dumps(empty_notebook))
    shutil.copy(ROOT / "tests/corpus/notebooks/lab_jupyterlab_filled.ipynb", tmp_path / "Lab_Normalizacao.ipynb")
    out = run("check", "-k", "rmsnorm", "--lang", "pt-BR", cwd=tmp_path)
    assert "Conferindo Lab_Normalizacao.ipynb" in out.stderr, out.stderr
    assert out.returncode == 0, out.stdout + out.stderr
    empty = tmp_path / "nada"
    empty.mkdir()
    (empty / "lab.ipynb").symlink_to(tmp_path / "Lab_Normalizacao.ipynb")  # grading follows no link
    out = run("check", "--lang", "pt-BR", cwd=empty)
    assert out.returncode == 2 and "nenhum arquivo de exercício" in out.stderr


def test_check_of_a_folder_reads_the_answers_of_the_notebook_it_checks(tmp_path):
    """``normlab check .`` beside a lab.ipynb checked the notebook's functions but looked for
    verification.toml for the answers, and told the student the questions would score 0; ``grade
    .`` reads them from the notebook. The folder's answers are the checked notebook's."""
    shutil.copy(ROOT / "tests/corpus/notebooks/lab_jupyterlab_filled.ipynb", tmp_path / "lab.ipynb")
    of_notebook = run("check", "lab.ipynb", "-k", "rmsnorm_small", "--lang", "en", cwd=tmp_path).stdout
    of_folder = run("check", ".", "-k", "rmsnorm_small", "--lang", "en", cwd=tmp_path).stdout
    blanks = of_notebook[of_notebook.index("Verification questions") :]
    assert "q6: written (blank)" in blanks
    assert of_folder.endswith(blanks) and "verification.toml" not in of_folder, of_folder


def test_of_two_copies_that_implement_as_much_the_last_saved_is_checked_and_the_others_named(tmp_path):
    """Student trial: lab-Copy1.ipynb (worked on last) and an older Untitled.ipynb both implement
    the whole lab; check took Untitled.ipynb, first by name, said nothing of the others, and the
    grading note claimed it implemented the most. The last saved wins a tie, and the note says
    it was a tie; the public tests' helper shipped beside the notebook is never a candidate."""
    notebook = ROOT / "tests/corpus/notebooks/lab_jupyterlab_filled.ipynb"
    shutil.copy(notebook, tmp_path / "Untitled.ipynb")
    shutil.copy(notebook, tmp_path / "lab-Copy1.ipynb")
    (tmp_path / "normlab_public.py").write_text("def rmsnorm(x, gamma, eps=1e-6):\n    return x * gamma\n")
    os.utime(tmp_path / "Untitled.ipynb", (1_700_000_000, 1_700_000_000))
    out = run("check", "-k", "rmsnorm", "--lang", "en", cwd=tmp_path)
    assert "Checking lab-Copy1.ipynb" in out.stderr, out.stderr
    assert "others implement as many" in out.stderr and "saved last" in out.stderr and "Untitled.ipynb" in out.stderr
    assert "normlab_public.py" not in out.stderr


def test_messages_name_the_students_own_file_and_cell(tmp_path):
    """A notebook's or a single file's messages name it as the student knows it (its own name,
    a cell by its number and first line), never the grader's internal copy."""
    code = "import numpy as np\ndef layernorm(x, gamma, beta, eps=1e-5):\n    raise ValueError('boom')\n"
    cell = {"cell_type": "code", "metadata": {}, "source": code, "outputs": [], "execution_count": None}
    notebook = tmp_path / "my_lab.ipynb"
    notebook.write_text(json.dumps({"cells": [cell], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}))
    (tmp_path / "my_lab.py").write_text(code)
    for path in (notebook, tmp_path / "my_lab.py"):
        out = run("grade", str(path), "--public-only", "-k", "rmsnorm or layernorm", "--lang", "en")
        assert f"rmsnorm is not defined in {path.name}." in out.stdout, out.stdout
        assert "submission.py" not in out.stdout
    out = run("grade", str(notebook), "--public-only", "-k", "layernorm", "--lang", "en")
    assert 'File "<cell 1: import numpy as np>", line 3, in layernorm' in out.stdout, out.stdout


def test_grade_class_grades_a_folder_of_py_notebook_and_folder_submissions(tmp_path):
    from grader.course import MODULES

    handed_in = tmp_path / "handed-in"
    (handed_in / "alice").mkdir(parents=True)
    for module in MODULES:
        shutil.copy(course.solutions_dir() / f"{module}.py", handed_in / "alice" / f"{module}.py")
    shutil.copy(course.solutions_dir() / "verification.toml", handed_in / "alice" / "verification.toml")
    (handed_in / "bob.py").write_text("import numpy as np\n")
    source = "\n\n".join((course.solutions_dir() / f"{m}.py").read_text() for m in MODULES)
    cells = [
        {"cell_type": "code", "metadata": {}, "source": text, "outputs": [], "execution_count": None}
        for text in (source, notebook_answer_cell())  # the questions are graded too, as by autograde
    ]
    (handed_in / "carol.ipynb").write_text(
        json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5})
    )
    (handed_in / "notes.txt").write_text("not a submission")
    (handed_in / "eve.py").symlink_to(course.solutions_dir() / "rmsnorm.py")
    out_dir = tmp_path / "out"

    first = run("grade-class", handed_in, "-o", out_dir, "--no-progress", "--lang", "en")
    assert first.returncode == 3 and "eve" in first.stderr and "links are never followed" in first.stderr
    assert "3 graded, 0 unchanged since the last run, 1 not graded" in first.stdout, first.stdout
    import csv

    with open(out_dir / "grades.csv", newline="") as handle:
        rows = {row[0]: row[1:] for row in csv.reader(handle)}
    full = rows["alice"][1]
    assert rows["alice"][0] == full and rows["carol"][:2] == [full, full] and rows["bob"][0] == "0"
    assert "notes" not in rows and rows["alice"][-1] == "graded"
    # eve's link was refused: her row says so, with no score (the registrar sees who is missing).
    assert rows["eve"][:2] == ["", ""] and rows["eve"][-1].startswith("not graded: ")
    assert "bob.py" in (out_dir / "feedback" / "bob.html").read_text()  # named as bob handed it in

    again = run("grade-class", handed_in, "-o", out_dir, "--no-progress", "--student", "alice", "--student", "bob")
    assert again.returncode == 0 and "2 graded, 0 unchanged" in again.stdout, again.stdout + again.stderr
    (handed_in / "eve.py").unlink()
    rest = run("grade-class", handed_in, "-o", out_dir, "--no-progress")
    assert rest.returncode == 0 and "0 graded, 3 unchanged" in rest.stdout, rest.stdout + rest.stderr


def test_grade_class_answers_are_each_students_own_and_a_changed_one_is_graded_again(tmp_path):
    """A verification.toml lying in the class folder is nobody's: a <student>.py has no answers
    file. A folder student's changed answers file is graded again, as a changed module is."""
    import csv

    handed_in, out_dir = tmp_path / "handed-in", tmp_path / "out"
    (handed_in / "carol").mkdir(parents=True)
    for module in MODULES:
        shutil.copy(course.solutions_dir() / f"{module}.py", handed_in / "carol" / f"{module}.py")
    answers = (course.solutions_dir() / "verification.toml").read_text()
    (handed_in / "carol" / "verification.toml").write_text(answers.replace('[q1]\na = "', '[q1]\na = "x'))
    (handed_in / "bob.py").write_text("\n\n".join((course.solutions_dir() / f"{m}.py").read_text() for m in MODULES))
    (handed_in / "verification.toml").write_text(answers)  # dropped beside bob.py: not his

    def scores():
        with open(out_dir / "grades.csv", newline="") as handle:
            return {row["student"]: float(row["score"]) for row in csv.DictReader(handle)}

    first = run("grade-class", handed_in, "-o", out_dir, "--no-progress", "--lang", "en")
    assert first.returncode == 0 and "2 graded" in first.stdout, first.stdout + first.stderr
    before = scores()
    assert before["bob"] < before["carol"]  # carol answered all but q1 a; bob answered nothing
    assert "A single .py file carries no answers file" in (out_dir / "feedback" / "bob.html").read_text()
    (handed_in / "carol" / "verification.toml").write_text(answers)
    again = run("grade-class", handed_in, "-o", out_dir, "--no-progress", "--lang", "en")
    assert "1 graded, 1 unchanged since the last run" in again.stdout, again.stdout + again.stderr
    assert scores()["carol"] > before["carol"]


def test_grade_class_refuses_two_hand_ins_of_one_student_instead_of_grading_either(tmp_path):
    """alice/ beside a stray alice.py: grading the last one found silently replaced alice's
    full marks with 0; which hand-in is hers is hers (or the instructor's) to say."""
    from grader.integrations.folder import FolderClass

    handed_in = tmp_path / "handed-in"
    (handed_in / "alice").mkdir(parents=True)
    (handed_in / "alice" / "rmsnorm.py").write_text("x = 1\n")
    (handed_in / "alice.py").write_text("x = 1\n")
    (handed_in / "bob.py").write_text("x = 1\n")
    entries = list(FolderClass(handed_in, tmp_path / "out").submissions())
    assert [type(e).__name__ for e in entries] == ["Refused", "Submitted"]
    assert entries[0].student == "alice" and "alice, alice.py" in entries[0].reason


def test_a_run_for_some_students_reads_no_other_students_hand_in(tmp_path, monkeypatch):
    """Red team, round 8: `grade-class --student alice` still searched mallory's folder (and
    parsed her answers files) twice, a minute of the main process for one student's run."""
    from grader import handin
    from grader.integrations.folder import FolderClass

    handed_in = tmp_path / "handed-in"
    for student in ("alice", "mallory"):
        (handed_in / student / "work").mkdir(parents=True)
        (handed_in / student / "work" / "lab.ipynb").write_text('{"cells": []}')
    searched = []
    real = handin.find_submission
    monkeypatch.setattr(handin, "find_submission", lambda upload, *a: searched.append(upload.name) or real(upload, *a))
    entries = list(FolderClass(handed_in, tmp_path / "out").submissions(frozenset({"alice"})))
    assert [e.student for e in entries] == ["alice"] and searched == ["alice"]


def test_written_points_of_a_grade_class_class_reach_its_grades_csv(tmp_path):
    """normlab written export/import on a class graded with grade-class: one page per question
    from the students' answers files, the ticked items' points (from the bank) land in
    grades.csv beside the automatic score, and a later grade-class run keeps them."""
    import csv

    from grader.questions import load

    handed_in = tmp_path / "handed-in"
    (handed_in / "alice").mkdir(parents=True)
    for module in MODULES:
        shutil.copy(course.solutions_dir() / f"{module}.py", handed_in / "alice" / f"{module}.py")
    shutil.copy(course.solutions_dir() / "verification.toml", handed_in / "alice" / "verification.toml")
    (handed_in / "bob.py").write_text("import numpy as np\n")
    out_dir = tmp_path / "out"
    assert run("grade-class", handed_in, "-o", out_dir, "--no-progress").returncode == 0

    with open(out_dir / "grades.csv", newline="") as handle:  # nothing imported: empty, not a graded 0
        assert {row["written"] for row in csv.DictReader(handle)} == {""}
    page = run("written", "export", "lab", "q7", "--submissions", handed_in, "--class-dir", out_dir).stdout
    alice = page.split("## student: alice")[1].split("## student:")[0]
    bob = page.split("## student: bob")[1]
    assert "outlier channel" in alice and "(no answer)" in bob  # alice's own words; bob has no answers file
    ticked = alice.replace("- [ ] item 1 ", "- [x] item 1 ").replace("- [ ] item 4 ", "- [x] item 4 ")
    (tmp_path / "q7.md").write_text(page.replace(alice, ticked, 1))
    imported = run("written", "import", tmp_path / "q7.md", "--class-dir", out_dir)
    rubric = load().question("q7").written.rubric
    points = rubric[0].points + rubric[3].points
    assert imported.returncode == 0 and f"alice                    {points:g}" in imported.stdout

    def rows():
        with open(out_dir / "grades.csv", newline="") as handle:
            return {row["student"]: row for row in csv.DictReader(handle)}

    before = rows()
    assert before["alice"]["q7_written"] == f"{points:g}" and before["bob"]["q7_written"] == "0"
    assert float(before["alice"]["total"]) == float(before["alice"]["score"]) + points
    assert before["alice"]["written"] == f"{points:g}"
    again = run("grade-class", handed_in, "-o", out_dir, "--no-progress", "--force")
    assert again.returncode == 0 and rows() == before  # the imported points survive a re-run
    # Exported again, the page says alice's grade; --ungraded leaves her out.
    args = ("written", "export", "lab", "q7", "--submissions", handed_in, "--class-dir", out_dir)
    assert f"Graded earlier: {points:g} points" in run(*args).stdout.split("## student: bob")[0]
    assert "Graded earlier: 0 points" in run(*args).stdout.split("## student: bob")[1]  # a blank answer: 0
    assert "## student:" not in run(*args, "--ungraded").stdout  # both are graded
    # A page naming a student the class never graded is refused, and nothing changes.
    (tmp_path / "eve.md").write_text(page.replace("## student: bob", "## student: eve"))
    refused = run("written", "import", tmp_path / "eve.md", "--class-dir", out_dir)
    assert refused.returncode == 2 and "eve" in refused.stderr and rows() == before


def test_grades_csv_holds_the_class_as_it_stands_and_no_stale_grade(tmp_path):
    """A student refused this run (a second hand-in) keeps no earlier grade in grades.csv and
    says why; a student whose hand-in is gone has no row; a --student naming nobody is a usage
    error (an instructor trial found the stale grades and the quiet no-op)."""
    import csv

    handed_in = tmp_path / "handed-in"
    handed_in.mkdir()
    solved = "\n\n".join((course.solutions_dir() / f"{m}.py").read_text() for m in MODULES)
    (handed_in / "alice.py").write_text(solved)
    (handed_in / "xena.py").write_text("import numpy as np\n")
    out_dir = tmp_path / "out"
    assert run("grade-class", handed_in, "-o", out_dir, "--no-progress").returncode == 0

    def rows():
        with open(out_dir / "grades.csv", newline="") as handle:
            return {row["student"]: row for row in csv.DictReader(handle)}

    assert float(rows()["alice"]["score"]) > 0 and "xena" in rows()
    (handed_in / "alice").mkdir()  # a second hand-in: alice is refused
    (handed_in / "xena.py").unlink()  # xena withdrew
    again = run("grade-class", handed_in, "-o", out_dir, "--no-progress")
    assert again.returncode == 3
    after = rows()
    assert "xena" not in after and after["alice"]["score"] == "" and "several hand-ins" in after["alice"]["status"]
    nobody = run("grade-class", handed_in, "-o", out_dir, "--no-progress", "--student", "nobody")
    assert nobody.returncode == 2 and "nobody" in nobody.stderr


def test_a_blank_answer_graded_zero_then_written_is_graded_again(tmp_path):
    """Importing a page gives a blank answer 0; a student who hands in their answers afterwards
    must not keep that 0 unseen (an instructor trial: `--ungraded` left them out for good)."""
    handed_in, out_dir = tmp_path / "handed-in", tmp_path / "out"
    for student in ("alice", "bob"):
        (handed_in / student).mkdir(parents=True)
        for module in MODULES:
            shutil.copy(course.solutions_dir() / f"{module}.py", handed_in / student / f"{module}.py")
    shutil.copy(course.solutions_dir() / "verification.toml", handed_in / "alice" / "verification.toml")
    assert run("grade-class", handed_in, "-o", out_dir, "--no-progress").returncode == 0
    args = ("written", "export", "lab", "q7", "--submissions", handed_in, "--class-dir", out_dir)
    page = run(*args).stdout
    (tmp_path / "q7.md").write_text(page.replace("- [ ] item 1 ", "- [x] item 1 ", 1))  # alice's; bob's is blank
    imported = run("written", "import", tmp_path / "q7.md", "--class-dir", out_dir)
    assert imported.returncode == 0 and "bob" in imported.stdout
    assert "## student:" not in run(*args, "--ungraded").stdout
    shutil.copy(course.solutions_dir() / "verification.toml", handed_in / "bob" / "verification.toml")
    assert run("grade-class", handed_in, "-o", out_dir, "--no-progress").returncode == 0
    rest = run(*args, "--ungraded").stdout
    assert "## student: bob" in rest and "the answer changed since" in rest and "## student: alice" not in rest


def test_a_stray_answers_file_in_the_class_folder_is_no_notebooks_written_answer(tmp_path):
    """Red team, round 4: a verification.toml lying in the class folder was shown on the
    written page as every lone notebook's answer, ready to be given points."""
    handed_in, out_dir = tmp_path / "handed-in", tmp_path / "out"
    handed_in.mkdir()
    cells = [{"cell_type": "code", "metadata": {}, "source": "import numpy as np", "outputs": []}]
    notebook = {"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    (handed_in / "alice.ipynb").write_text(json.dumps(notebook))
    shutil.copy(course.solutions_dir() / "verification.toml", handed_in / "verification.toml")
    run("grade-class", handed_in, "-o", out_dir, "--no-progress")
    page = run("written", "export", "lab", "q7", "--submissions", handed_in, "--class-dir", out_dir).stdout
    assert "## student: alice" in page and "(no answer)" in page.split("## student: alice")[1]


def _peggy_and_judy(handed_in):
    """Two solved hand-ins with the work inside the student's folder: peggy/lab.ipynb and
    judy/exercises/, no answers file."""
    solved = "\n\n".join((course.solutions_dir() / f"{m}.py").read_text() for m in MODULES)
    cells = [{"cell_type": "code", "metadata": {}, "source": solved, "outputs": []}]
    (handed_in / "peggy").mkdir(parents=True)
    (handed_in / "peggy" / "lab.ipynb").write_text(json.dumps({"cells": cells, "metadata": {}, "nbformat": 4}))
    (handed_in / "judy" / "exercises").mkdir(parents=True)
    for module in MODULES:
        shutil.copy(course.solutions_dir() / f"{module}.py", handed_in / "judy" / "exercises" / f"{module}.py")


def test_a_class_folder_holding_a_notebook_or_nested_modules_is_graded_and_an_archive_said(tmp_path):
    """An instructor trial: a student's folder holding only lab.ipynb, or exercises/ one level
    down, scored 0; a zip was dropped without a word."""
    import csv

    handed_in, out_dir = tmp_path / "handed-in", tmp_path / "out"
    _peggy_and_judy(handed_in)
    (handed_in / "olivia.zip").write_bytes(b"PK\x05\x06" + bytes(18))
    out = run("grade-class", handed_in, "-o", out_dir, "--no-progress")
    assert out.returncode == 3 and "olivia" in out.stderr and "archive" in out.stderr
    with open(out_dir / "grades.csv", newline="") as handle:
        rows = {row["student"]: row for row in csv.DictReader(handle)}
    reference = json.loads(run("grade", "solutions", "--json").stdout)
    auto = reference["max_score"] - 23  # the questions' auto-graded parts: no answers handed in
    assert float(rows["peggy"]["score"]) == float(rows["judy"]["score"]) == auto


def test_a_students_folder_answers_are_read_wherever_the_work_inside_it_was_found(tmp_path):
    """Red team, round 5: a notebook found inside peggy/ with verification.toml beside it, and
    judy/exercises/ with judy/verification.toml, lost every auto-graded question point (23) and
    their written answers (a Gradescope upload of the same folder scored full marks), and normlab
    grade on either folder graded nothing. Read as on Gradescope, in the grading and on the
    written page; a changed file is graded again."""
    import csv

    handed_in, out_dir = tmp_path / "handed-in", tmp_path / "out"
    _peggy_and_judy(handed_in)
    answers = (course.solutions_dir() / "verification.toml").read_text()
    (handed_in / "peggy" / "verification.toml").write_text(answers)
    (handed_in / "judy" / "verification.toml").write_text(answers.replace('[q1]\na = "', '[q1]\na = "x'))

    def scores():
        with open(out_dir / "grades.csv", newline="") as handle:
            return {row["student"]: float(row["score"]) for row in csv.DictReader(handle)}

    out = run("grade-class", handed_in, "-o", out_dir, "--no-progress")
    assert out.returncode == 0, out.stdout + out.stderr
    full = json.loads(run("grade", "solutions", "--json").stdout)["max_score"]
    first = scores()
    assert first["peggy"] == full and full - 5 < first["judy"] < full  # judy's q1 a is wrong
    page = run("written", "export", "lab", "q7", "--submissions", handed_in, "--class-dir", out_dir).stdout
    assert "(no answer)" not in page.split("## student: judy")[1].split("## student:")[0]
    (handed_in / "judy" / "verification.toml").write_text(answers)
    again = run("grade-class", handed_in, "-o", out_dir, "--no-progress")
    assert "1 graded, 1 unchanged since the last run" in again.stdout, again.stdout + again.stderr
    assert scores()["judy"] == full
    for student in ("peggy", "judy"):  # normlab grade on the same folder: the same grade
        assert json.loads(run("grade", handed_in / student, "--json").stdout)["score"] == full


def test_a_refused_entrys_name_reaches_neither_a_spreadsheet_formula_nor_the_terminal(tmp_path):
    """Red team, round 5: a refused file name went raw into grades.csv (``=HYPERLINK(...)``,
    ``@SUM(...)``: formulas in a spreadsheet) and onto the console (escape sequences that clear
    the screen, a newline that draws a fake "270/270" line)."""
    import csv

    handed_in, out_dir = tmp_path / "handed-in", tmp_path / "out"
    handed_in.mkdir()
    names = ['=HYPERLINK("x","y").py', "@SUM(1+1).py", "-2+3.py", "x\x1b[2J\x1b[H\rmallory  270∕270\n.py"]
    for name in names:
        (handed_in / name).write_text("import numpy as np\n")
    out = run("grade-class", handed_in, "-o", out_dir, "--no-progress")
    assert out.returncode == 3, out.stdout + out.stderr
    shown = out.stdout + out.stderr
    assert "\x1b" not in shown and "\r" not in shown and "\nmallory" not in shown and "\n.py" not in shown
    with open(out_dir / "grades.csv", newline="") as handle:
        cells = [row["student"] for row in csv.DictReader(handle)]
    assert len(cells) == len(names) and not [c for c in cells if c[:1] in "=+-@" or "\x1b" in c or "\n" in c]
    # Two names alike once shown (one printable line, cut at 100) stay two rows, apart from a student's.
    (handed_in / ("a" * 100)).mkdir()
    for name in ("a" * 100 + "!.py", "a" * 100 + "~x.py", "q\x01.py", "q\x02.py"):
        (handed_in / name).write_text("import numpy as np\n")
    run("grade-class", handed_in, "-o", out_dir, "--no-progress")
    with open(out_dir / "grades.csv", newline="") as handle:
        assert len(list(csv.DictReader(handle))) == len(names) + 5


def test_several_answers_files_in_a_folder_are_said_and_a_blank_template_is_no_choice(tmp_path):
    """Red team, round 6: dave's folder held his filled verification.toml and the released
    exercises/ with its blank template beside a notebook: neither was read, without a word
    (-23). The blank template is no choice; two filled ones are named in a note."""
    handed_in, out_dir = tmp_path / "handed-in", tmp_path / "out"
    solved = "\n\n".join((course.solutions_dir() / f"{m}.py").read_text() for m in MODULES)
    cells = [{"cell_type": "code", "metadata": {}, "source": solved, "outputs": []}]
    (handed_in / "dave" / "nb").mkdir(parents=True)
    (handed_in / "dave" / "nb" / "lab.ipynb").write_text(json.dumps({"cells": cells, "metadata": {}, "nbformat": 4}))
    shutil.copytree(course.exercises_dir(), handed_in / "dave" / "exercises")
    shutil.copy(course.solutions_dir() / "verification.toml", handed_in / "dave" / "verification.toml")
    full = json.loads(run("grade", "solutions", "--json").stdout)["max_score"]
    graded = json.loads(run("grade", handed_in / "dave", "--json").stdout)
    assert graded["score"] == full, [n for n in graded["notes"]]
    shutil.copy(course.solutions_dir() / "verification.toml", handed_in / "dave" / "nb" / "old.toml")
    (handed_in / "dave" / "exercises" / "verification.toml").write_text('[q1]\na = "b"\n')
    out = run("grade-class", handed_in, "-o", out_dir, "--no-progress", "--lang", "en")
    assert out.returncode == 0, out.stdout + out.stderr
    page = (out_dir / "feedback" / "dave.html").read_text()
    assert "several answers files" in page and "exercises/verification.toml" in page


def test_a_grade_class_page_exported_before_a_student_handed_in_again_is_refused(tmp_path):
    """Red teams 31 and 32: on the grade-class path, a page exported before alice handed in a
    new answer was imported, and grades.csv counted the old points for it until the next export.
    As on nbgrader, refused with nothing imported; a page exported again is taken."""
    import csv

    handed_in = tmp_path / "handed-in"
    (handed_in / "alice").mkdir(parents=True)
    for module in MODULES:
        shutil.copy(course.solutions_dir() / f"{module}.py", handed_in / "alice" / f"{module}.py")
    answers = handed_in / "alice" / "verification.toml"
    shutil.copy(course.solutions_dir() / "verification.toml", answers)
    out_dir = tmp_path / "out"
    assert run("grade-class", handed_in, "-o", out_dir, "--no-progress").returncode == 0
    args = ("written", "export", "lab", "q7", "--submissions", handed_in, "--class-dir", out_dir)
    (tmp_path / "q7.md").write_text(run(*args).stdout.replace("- [ ] item 1 ", "- [x] item 1 "))
    text = answers.read_text(encoding="utf-8")
    answers.write_text(text.replace("A norm divides by a statistic", "I changed my mind. A norm divides by", 1))
    assert run("grade-class", handed_in, "-o", out_dir, "--no-progress").returncode == 0
    refused = run("written", "import", tmp_path / "q7.md", "--class-dir", out_dir)
    assert refused.returncode == 2 and "alice" in refused.stderr and "changed since" in refused.stderr
    with open(out_dir / "grades.csv", newline="") as handle:
        assert {row["written"] for row in csv.DictReader(handle)} == {""}
    (tmp_path / "q7.md").write_text(run(*args).stdout.replace("- [ ] item 1 ", "- [x] item 1 "))
    assert run("written", "import", tmp_path / "q7.md", "--class-dir", out_dir).returncode == 0


def test_grade_class_grades_students_named_with_accents_and_spaces(tmp_path):
    """A class downloaded from a learning platform names each student's folder by full name:
    `João Conceição/`, `Maria Sant'Anna_4411_file_/`: spaces, apostrophes, letters beyond ASCII.
    Every one of them was refused (exit 3), so a Brazilian class had to be renamed by hand. They
    are graded now, under their own name, on the console, in grades.csv and as a feedback page;
    a name spelled twice (one with composed accents, one decomposed, as a macOS archive leaves
    it) is one student with two hand-ins, and what could disguise a line stays refused."""
    import csv
    import unicodedata

    handed_in, out_dir = tmp_path / "handed-in", tmp_path / "out"
    source = "\n\n".join((course.solutions_dir() / f"{m}.py").read_text() for m in MODULES)
    names = ["João Conceição", "Maria Sant'Anna_4411_file_", "Zoë Ahn", "Ana Luíza.Souza"]
    for name in names:
        (handed_in / name).mkdir(parents=True)
        (handed_in / name / "work.py").write_text(source)
        shutil.copy(course.solutions_dir() / "verification.toml", handed_in / name / "verification.toml")
    decomposed = unicodedata.normalize("NFD", "Bárbara Lima")
    (handed_in / decomposed).mkdir()
    (handed_in / decomposed / "work.py").write_text(source)
    (handed_in / "Bárbara Lima.py").write_text(source)
    for refused in ("Ana  Dupla.py", "trailing .py", "Ana\u202eLima.py", "Ana\u2028Lima.py", "-bob.py"):
        (handed_in / refused).write_text(source)
    out = run("grade-class", handed_in, "-o", out_dir, "--no-progress")
    assert out.returncode == 3, out.stdout + out.stderr  # the refused entries
    with open(out_dir / "grades.csv", newline="", encoding="utf-8") as handle:
        rows = {row["student"]: row for row in csv.DictReader(handle)}
    for name in names:
        assert rows[name]["status"] == "graded" and float(rows[name]["score"]) > 0, rows[name]
        assert (out_dir / "feedback" / f"{name}.html").is_file()
        assert name in out.stdout
    assert rows["Bárbara Lima"]["status"].startswith("not graded") and "several hand-ins" in out.stdout + out.stderr
    others = [row for n, row in rows.items() if n not in names and n != "Bárbara Lima"]
    assert len(others) == 5 and all("not a student id" in row["status"] for row in others), others
    # Trial 64: "-bob" was refused with a rule ("letters, digits, ._@+-'") that it keeps.
    bob = next(row for n, row in rows.items() if n.endswith("-bob"))  # a spreadsheet-safe cell
    assert "a letter or digit first" in bob["status"], bob
    assert not any(ch in out.stdout + out.stderr for ch in "\u202e\u2028")
    # Hand grades reach such a student too: the written page names them, and reads them back.
    page = run("written", "export", "lab", "q7", "--submissions", handed_in, "--class-dir", out_dir).stdout
    joao = page.split("## student: João Conceição\n")[1].split("## student:")[0]
    (tmp_path / "q7.md").write_text(page.replace(joao, joao.replace("- [ ] item 1 ", "- [x] item 1 "), 1))
    assert run("written", "import", tmp_path / "q7.md", "--class-dir", out_dir).returncode == 0
    with open(out_dir / "grades.csv", newline="", encoding="utf-8") as handle:
        written = {row["student"]: row["q7_written"] for row in csv.DictReader(handle)}
    assert float(written["João Conceição"]) > 0 and written["Zoë Ahn"] == "", written  # not graded yet
    # A name pasted decomposed (from a macOS window) is the same --student (trial 40).
    again = run("grade-class", handed_in, "-o", out_dir, "--no-progress", "--student", decomposed)
    assert again.returncode == 3 and "several hand-ins" in again.stdout + again.stderr, again.stdout + again.stderr
    again = run(
        "grade-class", handed_in, "-o", out_dir, "--no-progress", "--student", unicodedata.normalize("NFD", "Zoë Ahn")
    )
    assert again.returncode == 0 and "Zoë Ahn " in again.stdout and "1 graded" in again.stdout, again.stdout
