"""The question bank, the answers file and the scoring of the verification questions."""

import ast
import copy
import json
import re
import subprocess
import sys
import tomllib
import unicodedata

import pytest
from helpers import copy_solutions, ends_within, notebook_answer_cell, reference_answers
from leakscan import leaks

from grader import course, questions, verification
from grader.messages import Message
from grader.model import Report, Status
from grader.questions import ANSWERS_FILE, WRITTEN
from grader.report import reporters

BANK = questions.load()
AUTO_POINTS = sum(q.auto_points for q in BANK.questions)
HIDDEN_KEYS = {"correct", "feedback", "answer", "tolerance", "rubric"}


def _score(values: dict) -> tuple[list, list]:
    return verification.score(BANK, verification.Answers(values, ANSWERS_FILE))


def _total(results) -> float:
    return round(sum(r.score for r in results), 6)


def test_the_bank_holds_the_nine_lesson_questions_in_both_languages():
    lesson = [q for q in BANK.questions if q.lesson]
    assert [q.number for q in lesson] == list(range(1, 10))
    for q in BANK.questions:
        texts = [q.text, *(p.prompt for p in q.parts), *(o.text for p in q.parts for o in p.options)]
        texts += [q.written.prompt] if q.written else []
        assert all(set(t) == {"en", "pt-BR"} and all(v.strip() for v in t.values()) for t in texts), q.id
    for q in lesson:  # every lesson question: an auto-graded part and a written part with a rubric
        assert q.parts and q.written and len(q.written.rubric) >= 2, q.id
        assert sum(r.points for r in q.written.rubric) == q.written.points


def test_the_site_and_the_lesson_ask_the_same_questions():
    lesson = (course.PACKAGE.parent / "site" / "verification.md").read_text()
    assert "normlab:questions" in lesson  # generated from the bank at build time, not copied


def test_reference_answers_get_every_auto_graded_point():
    results, manual = _score(reference_answers())
    assert [r for r in results if r.status is not Status.PASSED] == []
    assert _total(results) == AUTO_POINTS > 0
    assert all(m.answered for m in manual) and len(manual) == sum(1 for q in BANK.questions if q.written)


def test_a_blank_answers_file_scores_zero_and_check_lists_every_part():
    blank = verification.from_toml((course.exercises_dir() / ANSWERS_FILE).read_bytes())
    assert blank.problem is None
    results, manual = verification.score(BANK, blank)
    assert _total(results) == 0 and len(results) == sum(len(q.parts) for q in BANK.questions)
    assert {m.id for r in results for m in r.messages} == {"question.blank"}
    assert not any(m.answered for m in manual)
    expected = [
        (q.id, p) for q in BANK.questions for p in [*(x.id for x in q.parts), *([WRITTEN] if q.written else [])]
    ]
    assert verification.blanks(BANK, blank) == expected


def _wrong_answers(part):
    """(a wrong value, the points it must lose) for every way this part can be got wrong."""
    if part.kind == "choice":
        return [(o.id, part.points) for o in part.options if not o.correct]
    if part.kind == "multiple":
        right = {o.id for o in part.options if o.correct}
        # Leaving out a true statement costs its share of the true ones; ticking a false one,
        # its share of the false ones.
        true, false = len(right), len(part.options) - len(right)
        return [(sorted(right ^ {o.id}), part.points / (true if o.correct else false)) for o in part.options]
    step = part.tolerance * 1.5 + 1e-3 * max(1.0, abs(part.answer))
    return [(part.answer + step, part.points), (part.answer - step, part.points), ("about three", part.points)]


@pytest.mark.parametrize("qid", [q.id for q in BANK.questions if q.parts])
def test_each_wrong_choice_or_number_loses_exactly_its_points(qid):
    question = BANK.question(qid)
    for part in question.parts:
        for wrong, lost in _wrong_answers(part):
            answers = copy.deepcopy(reference_answers())
            answers[qid][part.id] = wrong
            results, _ = _score(answers)
            assert _total(results) == pytest.approx(AUTO_POINTS - lost), (qid, part.id, wrong)
            failed = [r for r in results if r.status is not Status.PASSED]
            assert [r.name for r in failed] == [questions.part_name(qid, part.id)]
            assert failed[0].messages  # says why


def test_numbers_within_the_tolerance_and_spelt_loosely_still_count():
    for q in BANK.questions:
        for part in (p for p in q.parts if p.kind == "number"):
            for given in (part.answer + part.tolerance * 0.9, str(part.answer), f"{part.answer:g}".replace(".", ",")):
                assert verification.judge(part, given)[0] is Status.PASSED, (q.id, part.id, given)


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("three", "question.not_a_number"),
        (True, "question.not_a_number"),
        ([1, 2], "question.not_a_number"),
        ({"x": 1}, "question.not_a_number"),
        (float("nan"), "question.wrong_number"),
        (float("inf"), "question.wrong_number"),
    ],
)
def test_a_non_number_where_a_number_is_expected_is_scored_with_a_message(value, message):
    part = BANK.question("q1").parts[1]
    status, points, messages = verification.judge(part, value)
    assert (status, points, [m.id for m in messages]) == (Status.FAILED, 0.0, [message])


@pytest.mark.parametrize(
    ("qid", "value", "message"),
    [
        ("q1", "z", "question.bad_choice"),
        ("q1", ["b", "c"], "question.bad_choice"),
        ("q1", 2, "question.bad_choice"),
        ("q1", "b, c", "question.bad_choice"),
        ("q2", ["a", "z"], "question.bad_choices"),
        ("q2", [1], "question.bad_choices"),
    ],
)
def test_a_letter_that_is_not_an_option_is_scored_with_a_message(qid, value, message):
    part = BANK.question(qid).parts[0]
    status, points, messages = verification.judge(part, value)
    assert (status, points, [m.id for m in messages]) == (Status.FAILED, 0.0, [message])


@pytest.mark.parametrize(
    "data",
    [
        b"[q1\na = 1\n",
        b'[q1]\na = "b"\na = "c"\n',
        b"\xff\xfe\x00garbage",
        b"q1 = 3\n[q1]\n",
        b"x" * (300 << 10),
        b"a = " + b"[" * 100_000,
        b"[q1]\na = " + b"{x=" * 50_000,
    ],
)
def test_a_malformed_answers_file_scores_zero_with_a_message_never_a_fault(data):
    answers = verification.from_toml(data)
    results, _ = verification.score(BANK, answers)
    assert _total(results) == 0
    assert all(r.status in (Status.ERROR, Status.FAILED) and r.messages for r in results)
    if answers.problem is not None:
        assert answers.problem.id in ("question.file_unreadable", "question.file_too_large")


def test_a_missing_answers_file_scores_zero_and_says_so(tmp_path):
    answers = verification.find(copy_solutions(tmp_path / "sub"))
    assert answers.problem is not None and answers.problem.id == "question.file_missing"
    assert _total(verification.score(BANK, answers)[0]) == 0


def test_wrong_option_feedback_explains_without_naming_the_key():
    for q in BANK.questions:
        for part in (p for p in q.parts if p.options):
            right = [o.text[lang] for o in part.options if o.correct for lang in ("en", "pt-BR")]
            for option in (o for o in part.options if not o.correct):
                for text in option.feedback.values():
                    assert not [r for r in right if len(r) >= 5 and r in text], (q.id, part.id, option.id)


def test_only_wrongly_ticked_options_get_their_feedback():
    part = BANK.question("q2").parts[0]
    right = sorted(o.id for o in part.options if o.correct)
    _, _, messages = verification.judge(part, right[:1])  # one true statement left out
    assert [m.id for m in messages] == ["question.wrong_choices"]  # its feedback would reveal it
    # Nor how many are wrong: with the wrongly ticked ones named, the count told the rest (a red team).
    assert messages[0].params == {"part": part.id}


def test_ticking_all_but_one_statement_names_no_option():
    """Red team 33: with all but one option ticked, the feedback on the false ones ticked (those
    without feedback are true) and the score told the last one: the whole key in one submission."""
    for qid, part in MULTIPLE:
        for left_out in part.options:
            ticked = [o.id for o in part.options if o is not left_out]
            _, _, messages = verification.judge(part, ticked)
            assert "question.option_feedback" not in [m.id for m in messages], (qid, left_out.id)


MODEL_NAMES = re.compile(r"gpt-?2|bert|llama|mistral|qwen|gemma|olmo|opt\b|pythia|t5|falcon", re.IGNORECASE)


def test_no_option_feedback_names_a_model_whose_facts_a_part_asks_for():
    """Red team 33: option c of q4.a said "OLMo-2 does this": the key of q5.c, another part."""
    for q in BANK.questions:
        for part in (p for p in q.parts if p.options):
            for option in (o for o in part.options if not o.correct):
                for text in option.feedback.values():
                    assert not MODEL_NAMES.search(text), (q.id, part.id, option.id, text)


@pytest.mark.parametrize(
    ("qid", "pid", "given", "points"),
    [
        ("q7", "a", 256, 0.0),  # its square, 65536, overflows float16: the slip the part is about
        ("q7", "a", "256.1", 0.0),
        ("q7", "a", "255.9", 1.0),
        ("q7", "a", "255,94", 1.0),
        ("q7", "a", 255.9375, 1.0),
        ("q7", "d", "6.4", 0.0),  # a count of tokens
        ("q5", "d", 169.4, 0.0),
    ],
)
def test_a_number_part_accepts_the_answer_and_not_the_slip_next_to_it(qid, pid, given, points):
    part = next(p for p in BANK.question(qid).parts if p.id == pid)
    assert verification.judge(part, given)[1] == points


def test_the_public_bank_has_no_key_and_cannot_score_but_finds_blanks():
    def keys(value):
        if isinstance(value, dict):
            return set(value) | set().union(*(keys(v) for v in value.values()))
        if isinstance(value, list):
            return set().union(*(keys(v) for v in value)) if value else set()
        return set()

    data = questions.public_data(BANK)
    assert keys(data) & HIDDEN_KEYS == set()
    assert leaks(questions.public_json(BANK)) == []
    public = questions.parse(json.loads(questions.public_json(BANK)), hidden=False)
    with pytest.raises(ValueError):
        verification.score(public, verification.Answers({}, ANSWERS_FILE))
    assert verification.blanks(public, verification.Answers(reference_answers(), ANSWERS_FILE)) == []


def test_the_answers_file_students_get_is_blank_and_leaks_nothing():
    text = (course.exercises_dir() / ANSWERS_FILE).read_text()
    assert leaks(text) == []
    assert all(v in ("", "\n") for parts in tomllib.loads(text).values() for v in parts.values())
    reference = (course.solutions_dir() / ANSWERS_FILE).read_text()
    assert leaks(reference)  # the scan does find the reference's answers


def test_notebook_answers_are_read_as_literals_and_never_run(tmp_path):
    marker = tmp_path / "ran"
    hostile = f"answers_q1 = {{'a': 'b', 'b': __import__('pathlib').Path({str(marker)!r}).touch()}}\n"
    cells = [notebook_answer_cell(), "answers_q9 = {'a': 1}\n", hostile]
    nb = {"cells": [{"cell_type": "code", "metadata": {}, "source": s, "outputs": []} for s in cells]}
    answers = verification.from_notebook(json.dumps(nb).encode())
    results, _ = verification.score(BANK, answers)
    assert not marker.exists()
    lost = {r.exercise for r in results if r.status is not Status.PASSED}
    assert lost == {"q1", "q9"}  # q1: not a literal, read as nothing; q9: the later cell wins


def test_gradescope_results_carry_only_the_auto_graded_parts():
    results, manual = _score(reference_answers())
    report = Report("sub", tuple(results), ("questions",), manual=tuple(manual))
    data = json.loads(reporters.to_gradescope(report))
    assert data["score"] == AUTO_POINTS
    assert len(data["tests"]) == len(results) and not [t for t in data["tests"] if "written" in t["name"].lower()]
    text = reporters.to_text(report, "en")
    assert "To be graded by hand" in text and "q1, written part: up to 2 points (answered)" in text


def _normlab(*args, cwd):
    return subprocess.run([sys.executable, "-m", "grader", *args], capture_output=True, text=True, cwd=cwd, timeout=900)


def test_grade_and_check_through_the_command_line(tmp_path):
    """One real grading: wrong answers lose their points, written parts are listed, check
    names the blanks."""
    sub = copy_solutions(tmp_path / "sub")
    answers = reference_answers()
    answers["q1"]["a"] = "a"
    answers["q3"]["b"] = "minus one"
    del answers["q8"]
    lines = [
        f"[{qid}]\n" + "".join(f"{k} = {json.dumps(v)}\n" for k, v in parts.items()) for qid, parts in answers.items()
    ]
    (sub / ANSWERS_FILE).write_text("\n".join(lines))
    out = _normlab("grade", str(sub), "--json", cwd=course.PACKAGE.parent)
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    lost = {t["name"]: t["max_score"] - t["score"] for t in data["tests"] if t["score"] != t["max_score"]}
    assert lost == {"q1/hidden/part_a": 1, "q3/hidden/part_b": 1, "q8/hidden/part_a": 1}
    manual = {m["question"]: m["answered"] for m in data["manual"]}
    assert manual["q1"] is True and manual["q8"] is False
    check = _normlab("check", str(sub), cwd=course.PACKAGE.parent)
    assert check.returncode == 0, check.stdout + check.stderr
    assert "still blank" in check.stdout and "q8: a, written (blank)" in check.stdout
    # An answer the grade cannot read is named before the hand-in, its form only (no key).
    assert "cannot read" in check.stdout and "q3: Part b expects a number" in check.stdout, check.stdout
    assert "q1: " not in check.stdout.split("cannot read")[1].split("still blank")[0]  # a wrong letter is readable


def test_letters_written_as_one_string_count_where_several_may_be_ticked():
    bank = questions.load()
    multiple = next(p for q in bank.questions for p in q.parts if p.kind == "multiple")
    single = next(p for q in bank.questions for p in q.parts if p.kind == "choice")
    right = sorted(o.id for o in multiple.options if o.correct)
    assert verification.judge(multiple, ", ".join(right))[1] == multiple.points
    assert verification.judge(multiple, " ".join(right))[1] == multiple.points
    assert verification.form_problem(single, "a, c") is not None and verification.form_problem(single, "a") is None
    for written in ("(b)", "b)", "B", "b."):  # how students write an option: a trial lost "(b)"
        assert verification.form_problem(single, written) is None, written
        assert verification.judge(single, written) == verification.judge(single, "b")


def test_the_student_zip_answers_and_checks_the_questions_without_keys(tmp_path):
    """The bundle has the blank answers file and the bank without keys; its own checker lists
    the blank answers, and cannot grade (no keys, no hidden suites)."""
    import zipfile

    from grader.integrations.student_zip import ROOT, write_student_zip

    bundle = write_student_zip(tmp_path / "student.zip")
    with zipfile.ZipFile(bundle) as z:
        names = set(z.namelist())
        z.extractall(tmp_path)
    assert f"{ROOT}/exercises/{ANSWERS_FILE}" in names and f"{ROOT}/grader/{questions.PUBLIC_FILE}" in names
    assert f"{ROOT}/grader/{questions.BANK_FILE}" not in names
    home = tmp_path / ROOT
    out = subprocess.run(
        [sys.executable, "-c", "import grader.questions as q; print(q.load().hidden, q.__file__)"],
        capture_output=True,
        text=True,
        cwd=home,
        timeout=120,
    )
    assert out.stdout.split()[0] == "False" and str(home) in out.stdout, out.stdout + out.stderr
    check = _normlab("check", "exercises", cwd=home)
    assert check.returncode == 1 and "still blank" in check.stdout and "q1: a, b, written (blank)" in check.stdout


def test_an_answers_file_that_is_a_symlink_or_a_fifo_is_not_read(tmp_path):
    import os

    secret = tmp_path / "secret.toml"
    secret.write_text('[q1]\na = "b"\n')
    link = tmp_path / "link"
    link.mkdir()
    (link / ANSWERS_FILE).symlink_to(secret)
    fifo = tmp_path / "fifo"
    fifo.mkdir()
    os.mkfifo(fifo / ANSWERS_FILE)
    for folder in (link, fifo):
        answers = verification.find(folder)
        assert answers.problem is not None and answers.problem.id == "question.file_missing"


def test_every_number_key_is_computed_from_its_source():
    """The number keys are not typed in from memory: each is recomputed here from the published
    config it cites (solutions/configs/) or from the reference implementation."""
    import numpy as np

    from grader.reference import Reference

    configs = course.solutions_dir() / "configs"
    llama = json.loads((configs / "llama-2-7b.json").read_text())
    gemma = json.loads((configs / "gemma-2-9b.json").read_text())
    reference = Reference(course.solutions_dir())
    try:
        ones = np.ones(2)
        computed = {
            ("q1", "b"): float(np.sqrt(np.mean(np.array([3.0, -4.0]) ** 2))),
            ("q2", "b"): 2 * llama["num_hidden_layers"],
            ("q3", "a"): float(reference.rmsnorm(np.array([100.0, -50.0, 25.0]), np.ones(3), eps=0.0)[0]),
            ("q3", "b"): float(reference.layernorm(np.array([1.0, 2.0, 3.0]), np.ones(3), np.zeros(3), eps=0.0)[0]),
            ("q4", "b"): 2 * 64,
            ("q5", "b"): gemma["rms_norm_eps"],
            ("q5", "d"): reference.inspect_config(str(configs / "gemma-2-9b.json"))["n_norms"],
            ("q6", "b"): float(reference.rmsnorm(np.array([1e-3, -1e-3]), ones, eps=1e-5)[0]),
            ("q7", "a"): float(np.sqrt(np.finfo(np.float16).max)),
            ("q7", "c"): float(reference.quantization_report(*reference.quantization_setup())["zeroed"][1, 0]),
            ("q7", "d"): float(
                reference.quantization_report(*reference.quantization_setup(), axis=0)["overflows"][3, 10]
            ),
            ("q9", "a"): (2 * llama["num_hidden_layers"] + 1) * llama["hidden_size"],
        }
    finally:
        reference.close()
    numbers = {(q.id, p.id): p for q in BANK.questions for p in q.parts if p.kind == "number"}
    assert set(numbers) == set(computed)
    for key, value in computed.items():
        assert verification.judge(numbers[key], value)[0] is Status.PASSED, (key, value)


def test_the_serving_contract_choice_is_what_the_reference_inspect_config_reports():
    """Question 5 (c) is read off the student's inspect_config: its key is the reference's placement."""
    from grader.reference import Reference

    reference = Reference(course.solutions_dir())
    try:
        placement = reference.inspect_config(str(course.solutions_dir() / "configs" / "olmo-2-7b.json"))["placement"]
    finally:
        reference.close()
    part = next(p for p in BANK.question("q5").parts if p.id == "c")
    correct = [o for o in part.options if o.correct]
    assert len(correct) == 1 and correct[0].text["en"].startswith(f"{placement}:")


def test_a_ticked_item_under_no_answer_is_refused_not_scored():
    from grader.faults import GraderFault
    from grader.integrations.nbgrader.written import page, read_page

    text = page("normlab", "q1", {"ana": "Norms rescale each token.", "carol": ""})
    ana, carol = text.split("## student: carol")
    assert [(m.student, m.points) for m in read_page(text)[2]] == [("carol", 0)]  # ana: not graded yet
    with pytest.raises(GraderFault, match=r"carol: rubric items are ticked under '\(no answer\)'"):
        read_page(ana + "## student: carol" + carol.replace("- [ ] item 1 ", "- [x] item 1 ", 1))
    marked = read_page(ana.replace("- [ ] item 1 ", "- [x] item 1 ", 1) + "## student: carol" + carol)[2]
    assert marked[0].student == "ana" and marked[0].points > 0


def test_a_missing_answers_file_is_said_at_the_top_of_the_report(tmp_path):
    # Each question part says it too, but Gradescope shows those parts after the due date, too
    # late to hand the file in: the top of the report (Gradescope's output) shows it at once.
    from grader.runner import FINAL, Options, grade

    report = grade(copy_solutions(tmp_path / "sub"), Options(suites=FINAL))
    assert "question.file_missing" in [note.id for note in report.notes]
    top = json.loads(reporters.to_gradescope(report, "en"))["output"]
    assert f"No answers file ({ANSWERS_FILE})" in top


def test_an_integer_past_floats_range_is_a_wrong_number_not_a_crash():
    # tomllib and a notebook's literals both accept integers of any size.
    bank = questions.load()
    answers = verification.from_toml(b"[q3]\nb = " + b"9" * 400 + b"\n")
    results, _ = verification.score(bank, answers)
    part = next(r for r in results if r.name.startswith("q3/") and r.name.endswith("part_b"))
    assert part.status is Status.FAILED and part.score == 0


MULTIPLE = [(q.id, p) for q in BANK.questions for p in q.parts if p.kind == "multiple"]


@pytest.mark.parametrize("empty", [[], "", ",", " , ", "YOUR ANSWER HERE"])
def test_ticking_nothing_is_a_blank_part_not_a_scored_one(empty):
    for qid, part in MULTIPLE:
        status, points, messages = verification.judge(part, empty)
        assert (status, points, [m.id for m in messages]) == (Status.FAILED, 0.0, ["question.blank"]), (qid, empty)
        answers = verification.Answers({qid: {part.id: empty}}, ANSWERS_FILE)
        assert (qid, part.id) in verification.blanks(BANK, answers)


def test_ticking_every_statement_earns_nothing_and_reveals_no_key():
    for qid, part in MULTIPLE:
        status, points, messages = verification.judge(part, [o.id for o in part.options])
        assert (status, points) == (Status.FAILED, 0), qid
        assert [m.id for m in messages] == ["question.all_ticked"], qid  # no option named, nor how many are false


LONG_KEY = (b"a" + b" . a" * 60_000, b"[" + b"a." * 120_000 + b"a]")


@pytest.mark.parametrize("key", LONG_KEY, ids=["dotted key", "table name"])
def test_a_key_of_thousands_of_parts_is_refused_before_tomllib_reads_it(key, monkeypatch):
    """tomllib's time grows with the square of a dotted key's parts: a 240 KB one, within the
    file's cap, held the grader for a minute (twice, with the decimal-comma retry). The file is
    refused, naming the line, and tomllib never sees it."""
    data = b'[q1]\na = "b"\n' + key + b" = 1,5x\n"
    seen = []
    monkeypatch.setattr(verification.tomllib, "loads", lambda text, **kw: seen.append(len(text)) or {})
    answers = verification.from_toml(data)
    assert seen == []
    assert answers.problem == Message("question.file_unreadable", {"file": "verification.toml", "line": "3"})


@pytest.mark.parametrize(
    "line",
    [
        b"\t" * 250_000 + b"!",
        b"a =" + b"\t" * 250_000 + b"!",
        b"[\t" * 120_000,
        b"a = 1" + b"\t" * 250_000 + b"!",
        b"a = " + b"1 " * 125_000 + b"!",
        b"a = 1" + "\u202f".encode() * 80_000 + b"!",
    ],
    ids=["tabs", "value", "brackets", "number-then-tabs", "spaced-digits", "narrow-spaces"],
)
def test_a_line_of_a_quarter_megabyte_of_blanks_is_read_in_one_pass(line):
    """Two runs of blanks that met in a pattern (the long-key check, the decimal-comma repair)
    were tried against each other: a line of 250 KB of tabs held the grader for many minutes."""
    data = b'[q1]\na = "b"\n' + line + b"\n"
    assert ends_within(30, lambda: verification.from_toml(data))
    assert verification.from_toml(data).problem.id == "question.file_unreadable"


def test_dotted_keys_an_answers_file_uses_are_read_and_dots_in_written_answers_are_text():
    text = 'q2.b = 64\n[q1]\na = "b"\n[q3]\nb = """\n' + "x." * 40 + '\n"""\n'
    answers = verification.from_toml(text.encode())
    assert answers.problem is None
    assert answers.values == {"q1": {"a": "b"}, "q2": {"b": 64}, "q3": {"b": "x." * 40 + "\n"}}


def test_an_integer_of_thousands_of_digits_in_the_answers_file_is_unreadable_not_a_fault():
    # tomllib raises ValueError for a decimal integer past sys.get_int_max_str_digits()
    answers = verification.from_toml(b"[q3]\nb = " + b"1" * 5000 + b"\n")
    assert answers.problem is not None and answers.problem.id == "question.file_unreadable"
    assert _total(verification.score(BANK, answers)[0]) == 0
    # a hex one has no such limit: read, and scored as a wrong number
    results, _ = verification.score(BANK, verification.from_toml(b"[q3]\nb = 0x" + b"f" * 5000 + b"\n"))
    part = next(r for r in results if r.name.startswith("q3/") and r.name.endswith("part_b"))
    assert part.status is Status.FAILED and part.score == 0


def _notebook(*cells: str) -> bytes:
    nb = {"cells": [{"cell_type": "code", "metadata": {}, "source": s, "outputs": []} for s in cells]}
    return json.dumps(nb).encode()


@pytest.mark.parametrize(
    ("cell", "read"),
    [
        ("%matplotlib inline\nanswers_q1 = {'a': 'b', 'b': 3.5}\n", {"a": "b", "b": 3.5}),
        ("!echo saving\nanswers_q1 = {'a': 'b'}\n", {"a": "b"}),
        ("%%capture\nanswers_q1 = {'a': 'c'}\n", {"a": "c"}),
        ("%%time\n%%capture out\nanswers_q1 = {'a': 'd'}\n", {"a": "d"}),
        ("    answers_q1 = {'a': 'e'}\n", {"a": "e"}),  # pasted with its indentation
        (">>> answers_q1 = {'a': 'f'}\n", {"a": "f"}),
        ("%%writefile saved.py\nanswers_q1 = {'a': 'g'}\n", None),  # written to a file, not run
        ("%%timeit\nanswers_q1 = {'a': 'h'}\n", None),  # run in a scope of its own
        ("%time answers_q1 = {'a': 'i'}\n", {"a": "i"}),  # %time runs its statement
        ("%time  answers_q1 = {'a': 'j'}\n", {"a": "j"}),  # dedented, as IPython times it
    ],
)
def test_answers_are_read_from_a_cell_as_the_kernel_runs_it(cell, read):
    """Red team, round 8: an answers cell starting with %matplotlib inline (or !echo) read as
    blank (-23), though Jupyter sets every answer. The cell's IPython syntax is read as the
    kernel reads it, and a %%time or %%capture cell's body runs in the notebook's namespace."""
    assert verification.from_notebook(_notebook(cell)).values.get("q1") == read


@pytest.mark.parametrize(
    ("cell", "read"),
    [
        ("answers_q1 = dict(a='b', b=3.54)\n", {"a": "b", "b": 3.54}),
        ("answers_q1: dict = {'a': 'b', 'b': 3.54}\n", {"a": "b", "b": 3.54}),
        ("answers_q1 = draft = {'a': 'b'}\n", {"a": "b"}),
        ("draft = answers_q1 = {'a': 'b'}\n", {"a": "b"}),
        ("answers_Q1 = {'A': 'b', 'a': 'c', 'B': 3.54}\n", {"a": "c", "b": 3.54}),  # a lower-case key wins
        ("answers_q1 = dict(**other)\n", {}),  # not read: what other holds is not written here
    ],
)
def test_answers_written_in_other_valid_python_are_read(cell, read):
    """Red team 33: valid Python that leaves the same dict in the kernel was read as not
    answered (0/2), and `check` called the parts blank."""
    assert verification.from_notebook(_notebook(cell)).values.get("q1") == read


def test_a_chained_assignment_sets_every_answer_it_names():
    """Red team 36: the kernel sets every target of a chain; only the last one was read."""
    answers = verification.from_notebook(_notebook("answers_q1 = answers_q2 = {'a': 'b'}\n"))
    assert answers.values["q1"] == answers.values["q2"] == {"a": "b"}
    answers = verification.from_notebook(_notebook("answers_q1 = {}\nanswers_q1['a'] = answers_q1['b'] = 'x'\n"))
    assert answers.values["q1"] == {"a": "x", "b": "x"}


def test_an_annotated_answer_inside_a_block_is_said_not_lost_in_silence():
    tree = ast.parse("if True:\n    answers_q1: dict = {'a': 'b'}\n")
    note = verification._in_a_block(tree, 3)
    assert note is not None and "answers_q1" in note.params["names"]


@pytest.mark.parametrize(
    "cell",
    [
        "answers_q3 = {}\nif True:\n    answers_q3['c'] = 'b'\n",
        "answers_q4 = {}\nfor k in ['a']:\n    answers_q4[k] = 'b'\n",
        "answers_q4 = {'b': 1}\ntry:\n    answers_q4['b'] += 127\nexcept Exception:\n    pass\n",
    ],
)
def test_a_part_set_inside_a_block_is_said_not_lost_in_silence(cell):
    """Trial 65: a part set inside `if`, a loop or `try` was reported "not answered yet" with no
    note, while a whole dict set there got one."""
    answers = verification.from_notebook(_notebook(cell))
    assert [n.id for n in answers.notes] == ["question.answers_in_block"], answers.notes
    assert answers.notes[0].params["names"] in ("answers_q3", "answers_q4")


def test_a_part_changed_by_code_in_place_is_said_computed_not_blank():
    cells = ("answers_q2 = {'a': [], 'b': 64}\n", "answers_q2['a'] += ['a', 'c']\n")
    answers = verification.from_notebook(_notebook(*cells))
    part = BANK.question("q2").parts[0]
    assert isinstance(answers.values["q2"]["a"], verification.Computed)
    assert verification.form_problem(part, answers.values["q2"]["a"]).id == "question.computed"


@pytest.mark.parametrize(
    ("qid", "value", "points"),
    [("q1", ["b"], 1.0), ("q1", ("b",), 1.0), ("q1", {"b"}, 1.0)],
)
def test_one_letter_in_a_list_tuple_or_set_is_that_choice(qid, value, points):
    part = BANK.question(qid).parts[0]
    assert verification.judge(part, value)[1] == part.points * points


def test_a_tuple_or_set_of_letters_is_the_ticked_statements():
    part = BANK.question("q2").parts[0]
    right = [o.id for o in part.options if o.correct]
    for value in (tuple(right), set(right), frozenset(right)):
        assert verification.judge(part, value)[1] == part.points, value


@pytest.mark.parametrize(
    ("qid", "pid", "given"),
    [
        ("q3", "b", "\u22121.2247"),
        ("q1", "b", "~3.54"),
        ("q1", "b", "\u2248 3.54"),
        ("q9", "a", "266 240"),
        ("q9", "a", "266\u202f240"),
        ("q9", "a", "266\u00a0240"),
    ],
)
def test_a_number_with_a_typeset_minus_an_approximation_sign_or_spaced_thousands_counts(qid, pid, given):
    """Red team 33: "−1.22" (a typeset minus), "~3.54" and "266 240" were "not a number"."""
    part = next(p for p in BANK.question(qid).parts if p.id == pid)
    assert verification.judge(part, given)[1] == part.points


@pytest.mark.parametrize("given", ["266 24", "2 66240", "3 .54", "~~3.54", "3.54~"])
def test_spaces_inside_a_number_are_not_read_as_anything_else(given):
    assert verification._as_number(given) is None


def test_answers_file_ids_are_read_whatever_their_case():
    answers = verification.from_toml(b'[Q1]\nA = "b"\n[q2]\nB = 64\n')
    assert answers.values == {"q1": {"a": "b"}, "q2": {"b": 64}}


def test_a_notebook_answer_keyed_by_a_huge_integer_is_ignored_not_a_fault():
    huge = "0x" + "f" * 4000  # str() of it raises ValueError past 4300 digits
    answers = verification.from_notebook(_notebook(f"answers_q1 = {{{huge}: 'b', 'a': 'b'}}\n"))
    assert answers.values["q1"] == {"a": "b"}
    verification.score(BANK, answers)


def test_a_notebook_saved_with_a_byte_order_mark_keeps_its_answers():
    raw = _notebook(notebook_answer_cell())
    plain, marked = verification.from_notebook(raw), verification.from_notebook(b"\xef\xbb\xbf" + raw)
    assert marked.values == plain.values and plain.values
    assert _total(verification.score(BANK, marked)[0]) == AUTO_POINTS


def test_a_notebook_of_several_hundred_kilobytes_keeps_its_answers(tmp_path):
    """Plots make a solved notebook pass 256 KiB: its answers are read as the notebook is graded."""
    nb = json.loads(_notebook(notebook_answer_cell()))
    plot = {"output_type": "display_data", "data": {"image/png": "iVBORw0KGgo" + "A" * (600 << 10)}, "metadata": {}}
    nb["cells"].insert(0, {"cell_type": "code", "metadata": {}, "source": "plot()", "outputs": [plot]})
    path = tmp_path / "lab.ipynb"
    path.write_text(json.dumps(nb))
    assert path.stat().st_size > 600 << 10
    assert _total(verification.score(BANK, verification.find(path))[0]) == AUTO_POINTS


def test_a_computed_answer_says_so_and_costs_only_its_own_part():
    cell = "answers_q2 = {'a': ['a', 'c'], 'b': 2 * 32}\nanswers_q1 = {'a': 'b'}\nanswers_q1['b'] = 3.5355\n"
    answers = verification.from_notebook(_notebook(notebook_answer_cell(), cell))
    results, _ = verification.score(BANK, answers)
    by_name = {r.name: r for r in results}
    computed = by_name[questions.part_name("q2", "b")]
    assert computed.score == 0 and [m.id for m in computed.messages] == ["question.computed"]
    assert by_name[questions.part_name("q2", "a")].status is Status.PASSED  # the literal part beside it counts
    assert by_name[questions.part_name("q1", "b")].status is Status.PASSED  # an item assignment counts
    assert _total(results) == AUTO_POINTS - BANK.question("q2").parts[1].points


def test_answers_a_kernel_would_not_hold_are_not_scored():
    """Read as the kernel leaves them: an assignment after the line its cell raised at never
    ran; an item assignment before the dict exists raised; .update(), |= and del change the
    answers by code."""
    right = reference_answers()

    def literal(qid):
        return {k: v for k, v in right[qid].items() if k != WRITTEN}

    cells = [
        f"raise ValueError('scratch')\nanswers_q1 = {literal('q1')!r}",
        "answers_q3['c'] = 'b'",
        f"answers_q2 = {literal('q2')!r}\nanswers_q2.update({{'a': ['b']}})",
        f"answers_q4 = {literal('q4')!r}\ndel answers_q4",
        f"answers_q6 = {literal('q6')!r}\nanswers_q6 |= {{'b': 1}}",
        f"answers_q5 = {literal('q5')!r}",
    ]
    answers = verification.from_notebook(_notebook(*cells), stopped={1: 1})
    assert "q1" not in answers.values and "q3" not in answers.values and answers.values["q4"] == {}
    results, _ = verification.score(BANK, answers)
    lost = {r.exercise for r in results if r.status is not Status.PASSED}
    assert lost >= {"q1", "q2", "q3", "q4", "q6"} and "q5" not in lost
    computed = {r.exercise for r in results if any(m.id == "question.computed" for m in r.messages)}
    assert computed == {"q2", "q6"}


def test_a_notebook_graded_whole_ignores_answers_after_the_line_a_cell_raised_at(tmp_path):
    from grader.runner import FINAL, Options, grade

    source = "\n\n".join((course.solutions_dir() / f"{m}.py").read_text() for m in course.MODULES)
    answers = notebook_answer_cell()
    cells = [source, "raise RuntimeError('not yet')\n" + answers]
    nb = {"cells": [{"cell_type": "code", "metadata": {}, "source": s, "outputs": []} for s in cells]}
    path = tmp_path / "lab.ipynb"
    path.write_text(json.dumps(nb))
    report = grade(path, Options(suites=FINAL, select=None))
    qids = {q.id for q in BANK.questions}
    parts = [r for r in report.results if r.exercise in qids]
    assert parts and all(r.score == 0 for r in parts)
    path.write_text(json.dumps(nb).replace("raise RuntimeError('not yet')\\n", ""))
    assert all(r.status is Status.PASSED for r in grade(path, Options(suites=FINAL)).results if r.exercise in qids)


def test_a_hard_linked_answers_file_is_not_read(tmp_path):
    """It may be another file's second name (another student's, the instructor's key): the
    class's change key refuses it, so grading must not read through it either."""
    target = tmp_path / "elsewhere.toml"
    target.write_text((course.solutions_dir() / ANSWERS_FILE).read_text())
    sub = copy_solutions(tmp_path / "sub")
    (sub / ANSWERS_FILE).unlink(missing_ok=True)
    (sub / ANSWERS_FILE).hardlink_to(target)
    answers = verification.find(sub)
    assert answers.problem is not None and answers.problem.id == "question.file_linked"
    assert _total(verification.score(BANK, answers)[0]) == 0


def test_a_written_page_done_in_parts_leaves_the_answers_it_did_not_grade():
    """Nothing ticked: not graded on this page, so an earlier grade (or "needs grading") stays;
    "none of the items" gives 0; both at once is refused."""
    from grader.faults import GraderFault
    from grader.integrations.nbgrader.written import page, read_page

    text = page("normlab", "q1", {"ana": "Norms rescale.", "ben": "Residuals add.", "cy": "Both."})
    ana, rest = text.split("## student: ben")
    ben, cy = rest.split("## student: cy")
    ben = ben.replace("- [ ] none of the items", "- [x] none of the items")
    cy = cy.replace("- [ ] item 1 ", "- [x] item 1 ", 1)
    marked = read_page(ana + "## student: ben" + ben + "## student: cy" + cy)[2]
    assert [m.student for m in marked] == ["ben", "cy"] and marked[0].points == 0 and marked[1].points > 0
    with pytest.raises(GraderFault, match="both ticked"):
        read_page(ana + "## student: ben" + ben.replace("- [ ] item 1 ", "- [x] item 1 ", 1))


def test_a_part_named_like_a_change_by_code_is_an_item_assignment():
    """``answers_q2["mutated"] = ...`` or ``["deleted"]`` sets an unknown part, as the kernel
    does: the question's real parts keep their literal values."""
    right = reference_answers()
    literal = {k: v for k, v in right["q2"].items() if k != WRITTEN}
    for name in ("mutated", "deleted"):
        cell = f"answers_q2 = {literal!r}\nanswers_q2[{name!r}] = 1"
        answers = verification.from_notebook(_notebook(cell))
        assert {k: v for k, v in answers.values["q2"].items() if k != name} == literal


def test_an_answers_file_beside_a_notebook_is_read_when_the_notebooks_answers_are_blank(tmp_path):
    """A student who filled in verification.toml and handed in the notebook with it: blank
    answer cells, so the file's answers count (a trial lost 23 points, silently); a notebook
    with answers keeps its own, and a note says the file was not read."""
    (tmp_path / ANSWERS_FILE).write_text((course.solutions_dir() / ANSWERS_FILE).read_text())
    blank = {qid: {k: None for k in parts if k != WRITTEN} for qid, parts in reference_answers().items()}
    cell = "\n".join(f"answers_{qid} = {parts!r}" for qid, parts in blank.items())
    path = tmp_path / "lab.ipynb"
    path.write_bytes(_notebook(cell))
    answers = verification.find(path)
    assert [n.id for n in answers.notes] == ["question.file_read_for_notebook"]
    assert _total(verification.score(BANK, answers)[0]) == AUTO_POINTS
    assert verification.find(path, beside_lone_file=False).notes == ()  # a class folder's file is not the student's
    path.write_bytes(_notebook(notebook_answer_cell()))
    answers = verification.find(path)
    assert [n.id for n in answers.notes] == ["question.file_not_read"]
    assert answers.where == "notebook" and _total(verification.score(BANK, answers)[0]) == AUTO_POINTS


def test_an_unreadable_answers_file_beside_a_blank_notebook_is_said(tmp_path):
    """A pt-BR student wrote ``b = 3,54`` (not TOML) in the verification.toml beside a notebook
    with blank answer cells: the file was ignored in silence and every part said "not answered".
    A file that is not TOML (here a quote left open; a decimal comma is now read, see below) has
    its problem as the note, in the grading and in check."""
    from click.testing import CliRunner

    from grader.cli import main

    (tmp_path / ANSWERS_FILE).write_text('[q3]\na = "3,54\n', encoding="utf-8")
    blank = {qid: {k: None for k in parts if k != WRITTEN} for qid, parts in reference_answers().items()}
    path = tmp_path / "lab.ipynb"
    path.write_bytes(_notebook("\n".join(f"answers_{qid} = {parts!r}" for qid, parts in blank.items())))
    answers = verification.find(path)
    assert [n.id for n in answers.notes] == ["question.file_unreadable"]
    assert answers.notes[0].params["line"] == "2"
    shown = CliRunner().invoke(main, ["check", str(path), "--lang", "en"]).output
    assert "not valid TOML (near line 2)" in shown


def test_an_answer_of_the_wrong_form_is_said_at_once(tmp_path):
    """A part's own message waits for the due date on Gradescope, too late to fix a form the
    grader cannot read ("zz" for one letter, text for a number): a note, shown at once, names
    the parts (never the key)."""
    from grader.runner import FINAL, Options, grade

    sub = copy_solutions(tmp_path / "sub")
    text = (course.solutions_dir() / ANSWERS_FILE).read_text()
    text = text.replace('[q1]\na = "b"', '[q1]\na = "zz"', 1).replace("b = 64", 'b = "sixty-four"', 1)
    (sub / ANSWERS_FILE).write_text(text)
    notes = [n for n in grade(sub, Options(suites=FINAL)).notes if n.id == "question.malformed_note"]
    assert len(notes) == 1 and notes[0].params["parts"] == "q1.a, q2.b"


def test_a_written_page_refuses_edited_or_doubled_sections_and_reads_any_tick():
    """An instructor trial: a renamed section gave one student another's points, a doubled one
    silently kept the last, ``[x ]`` or ``[✓]`` counted as unticked, and each import said only
    its first mistake. Every section is tied to its student and answer; every mistake is said."""
    from grader.faults import GraderFault
    from grader.integrations.nbgrader.written import page, read_page

    text = page("normlab", "q1", {"ana": "Norms rescale.", "ben": "Residuals add.", "cy": "Both."})
    head, ana, ben, cy = text.split("## student: ")
    ticked = {
        "ana": ana.replace("- [ ] item 1 ", "- [✓] item 1 ", 1),
        "cy": cy.replace("- [ ] item 2 ", "- [x ] item 2 ", 1),
    }
    marked = read_page(head + "## student: " + ticked["ana"] + "## student: " + ben + "## student: " + ticked["cy"])[2]
    assert [(m.student, m.items) for m in marked] == [("ana", (1,)), ("cy", (2,))]
    renamed = ticked["ana"].replace("ana", "dan", 1)  # ana's ticks under another name
    doubled = "## student: " + ticked["cy"]
    edited = ben.replace("Residuals add.", "Residuals add, and more.")
    with pytest.raises(GraderFault) as refused:
        read_page(head + "## student: " + renamed + "## student: " + edited + "## student: " + ticked["cy"] + doubled)
    said = str(refused.value)
    assert "dan:" in said and "ben:" in said and "cy: two sections" in said
    relabelled = text.replace("normlab:written normlab q1", "normlab:written normlab q4")
    with pytest.raises(GraderFault, match="ana"):
        read_page(relabelled.replace("- [ ] item 1 ", "- [x] item 1 ", 1))


def test_an_unreadable_answers_file_names_a_line_only_when_there_is_one():
    """tomllib's message for an unterminated string has no line: the note said "near line Unterm"."""
    for text, line in ((b'[q1]\na = "unterminated', "?"), (b"[q1]\na = = 3", "2")):
        assert verification.from_toml(text).problem.params["line"] == line


def test_the_answers_files_parsed_to_find_a_students_own_are_bounded(tmp_path, monkeypatch):
    """Red team, round 8: 60 answers files of 250 KB each, made slow to parse, in one student's
    folder: every one was parsed on every class run, in the grader's main process (43 s for
    that student, a minute for a run of another). What is parsed to tell the blank template from
    a filled file is bounded; files past it count as filled, and several are named in a note."""
    from grader import handin

    for i in range(12):
        (tmp_path / f"d{i}").mkdir()
        (tmp_path / f"d{i}" / ANSWERS_FILE).write_text("[q1]\na = [" + "1," * 60_000 + "1]\n")
    parsed = []
    real = verification.from_toml
    monkeypatch.setattr(verification, "from_toml", lambda data, *a: parsed.append(len(data or b"")) or real(data, *a))
    read, note = handin.upload_answers(tmp_path, tmp_path / "lab.ipynb")
    assert read is None and note is not None and note.id == "question.several_files"
    assert note.params["files"].endswith(", ... (+2)")
    assert 0 < sum(parsed) <= handin.BLANK_CHECKED_BYTES


def test_answers_assigned_inside_a_block_are_said_not_lost_in_silence():
    """Verification of red team 9: answers assigned inside `if True:` or `try:` were shown as
    "not answered yet" without a word (every question 0 for a cell wrapped in try)."""
    cell = "try:\n    answers_q1 = {'a': 'b'}\n    answers_q2 = {'a': ['a']}\nexcept Exception:\n    pass\n"
    answers = verification.from_notebook(_notebook("x = 1", cell))
    assert answers.values == {} and [n.id for n in answers.notes] == ["question.answers_in_block"]
    assert answers.notes[0].params == {"cell": 2, "names": "answers_q1, answers_q2"}
    assert verification.from_notebook(_notebook("answers_q1 = {'a': 'b'}\n")).notes == ()


@pytest.mark.parametrize(
    ("qid", "pid", "given"),
    [
        ("q5", "b", "10^-6"),
        ("q5", "b", "10**-6"),
        ("q5", "b", "10\u207b\u2076"),
        ("q5", "b", "1 \u00d7 10^-6"),
        ("q5", "b", "1.0*10^(-6)"),
        ("q5", "b", "1 x 10^\u22126"),
        ("q2", "b", "64 updates"),
        ("q9", "a", "266240 parameters"),
        ("q3", "b", "-1.2247 (rounded)"),
    ],
)
def test_a_power_of_ten_or_a_number_with_its_unit_counts(qid, pid, given):
    """Trial 38: "10^-6" for an epsilon and "64 updates" for a count, as students write them,
    were "not in a form the grader reads"; each is the one number it says."""
    part = next(p for p in BANK.question(qid).parts if p.id == pid)
    assert verification.form_problem(part, given) is None
    assert verification.judge(part, given)[1] == part.points


@pytest.mark.parametrize(
    "given", ["64 or 65", "10^-6 or 10^-5", "2^6", "10^400", "64 64", "about 64 updates or 65", "6 updates 4"]
)
def test_what_says_more_than_one_number_is_no_number(given):
    assert verification._as_number(given) is None


def test_ticked_letters_joined_by_and_are_the_ticked_statements():
    part = BANK.question("q2").parts[0]
    right = [o.id for o in part.options if o.correct]
    last_and = ", ".join(right[:-1]) + " and " + right[-1]
    for joined in (" and ".join(right), " & ".join(right), "; ".join(right), last_and):
        assert verification.judge(part, joined)[1] == part.points, joined
    assert verification._letters("a and", several=True) == ["a"]
    assert verification._letters("band", several=True) != ["b"]


def test_written_answers_without_metadata_keep_every_text_cell_of_their_question():
    """Trial 40: with nbgrader's metadata gone (Colab), notes put between a question and its
    answer were read as the answer and the answer lost; an answer in two cells lost its second;
    a question's heading pasted again later took the answer elsewhere. Every text cell after a
    question's cell, up to the next question's, is its answer, for the person grading to read."""
    headings = {q.id: BANK.heading(q) for q in BANK.questions}

    def md(text):
        return {"cell_type": "markdown", "metadata": {"id": "x"}, "source": text}

    nb = {
        "cells": [
            md("# Exercises\nnot a question"),
            md(headings["q1"] + "\n\nthe question's text"),
            {"cell_type": "code", "metadata": {}, "source": "answers_q1 = {}"},
            md("*my scratch notes*"),
            md("YOUR ANSWER HERE"),
            md("ANSWER 1"),
            md("ANSWER 1, continued"),
            md(headings["q2"]),
            md("ANSWER 2"),
            md(headings["q1"]),
            md("more on 2"),
        ]
    }
    found = verification.from_notebook(json.dumps(nb).encode()).values
    assert found["q1"][verification.WRITTEN] == "*my scratch notes*\n\nANSWER 1\n\nANSWER 1, continued"
    assert found["q2"][verification.WRITTEN] == f"ANSWER 2\n\n{headings['q1']}\n\nmore on 2"
    assert verification.is_blank(found.get("q3", {}).get(verification.WRITTEN))


@pytest.mark.parametrize(
    ("value", "text"), [("42", "42"), ('["one", "two"]', "one\ntwo"), ("{ a = 1 }", '{"a": 1}'), ('"x"', "x")]
)
def test_a_written_answer_that_is_no_text_is_shown_as_written(value, text, tmp_path):
    """Red team 39: `written = 42` in an answers file counted as answered, but the page the
    person grading reads said "(no answer)"."""
    from grader.integrations.folder import FolderClass
    from grader.integrations.folder_written import export_page

    (tmp_path / "class" / "alice").mkdir(parents=True)
    (tmp_path / "class" / "alice" / "rmsnorm.py").write_text("x = 1\n")
    (tmp_path / "class" / "alice" / "verification.toml").write_text(f"[q7]\nwritten = {value}\n")
    answers = verification.find(tmp_path / "class" / "alice")
    assert not verification.is_blank(answers.values["q7"][verification.WRITTEN])
    page = export_page(FolderClass(tmp_path / "class", tmp_path / "out"), "lab", "q7")
    assert "(no answer)" not in page and "> " + text.replace("\n", "\n> ") in page, page


@pytest.mark.parametrize("given", ["266.240", "266,240", "266 240", "~266,240", "266240 parameters", 266240])
def test_a_whole_number_part_reads_a_separator_before_three_digits_as_thousands(given):
    """A count written as the student's language writes it: "266.240" (pt-BR) and "266,240"
    (English) were read as 266.24 and lost the point, with a note; the part says it wants a
    whole number, so either separator groups thousands there."""
    part = next(p for p in BANK.question("q9").parts if p.id == "a")
    assert part.whole and verification.judge(part, given)[1] == part.points


@pytest.mark.parametrize(
    ("given", "right"), [("\u22121,225", True), ("-1.225", True), ("-1,2247", True), ("-1225", False)]
)
def test_a_decimal_part_reads_one_separator_as_the_decimal_point(given, right):
    """Elsewhere a comma or a point is the decimal point, with no note (trial 38: "1.512" for a
    normalized component drew a note about whole numbers nobody meant)."""
    part = next(p for p in BANK.question("q3").parts if p.id == "b")
    assert not part.whole and (verification.judge(part, given)[1] == part.points) is right


def test_an_unquoted_count_keeps_what_the_student_wrote():
    """`answers_q9 = {"a": 266.240}` in a notebook and `a = 266.240` in an answers file are the
    float 266.24 to Python; as written, the count 266240."""
    answers = verification.from_notebook(_notebook('answers_q9 = {"a": 266.240}'))
    toml = verification.from_toml(b"[q9]\na = 266.240\n")
    part = next(p for p in BANK.question("q9").parts if p.id == "a")
    for given in (answers.values["q9"]["a"], toml.values["q9"]["a"]):
        assert verification.judge(part, given)[1] == part.points, given
    assert "ambiguous" not in verification.__dict__ and not hasattr(verification, "ambiguous_note")


def test_a_written_answer_that_reads_no_answer_is_graded_like_any_other():
    """Red team 41: a student who wrote "(no answer)" had that taken for a blank answer on import,
    their section's digest never matched, and the whole page (every student's ticks) was refused."""
    from grader.integrations.nbgrader import written

    text = written.page("lab", "q7", {"bob": "(no answer)", "carol": ""})
    bob = text.split("## student: bob")[1].split("## student:")[0]
    ticked = text.replace(bob, bob.replace("- [ ] item 1 ", "- [x] item 1 "), 1)
    _, _, marked = written.read_page(ticked)
    assert [(m.student, m.items) for m in marked] == [("bob", (1,)), ("carol", ())]  # carol: blank, 0
    carol = text.split("## student: carol")[1]
    with pytest.raises(Exception, match="ticked under"):  # a real blank still takes no points
        written.read_page(text.replace(carol, carol.replace("- [ ] item 1 ", "- [x] item 1 "), 1))


@pytest.mark.parametrize(
    "given",
    ["0.34 percent", "64 thousand", "64 mil", "1,000 \u00d7 10^-6", "1.5 times ten to the minus six", "33 por cento"],
)
def test_words_or_a_mantissa_that_change_the_number_leave_it_unread(given):
    """Red team 41: "0.34 percent" passed a part whose answer is 0.3359, "64 thousand" one whose
    answer is 64, and "1,000 × 10^-6" (1e-3 to an English reader) one whose answer is 1e-6."""
    assert verification._as_number(given) is None and verification._as_number(given, whole=True) is None


def test_a_power_of_ten_with_a_remark_after_it_counts():
    part = next(p for p in BANK.question("q5").parts if p.id == "b")
    assert verification.judge(part, "1.0 \u00d7 10\u207b\u2076 (approximately)")[1] == part.points


def _part(qid, pid):
    return next(p for p in BANK.question(qid).parts if p.id == pid)


@pytest.mark.parametrize(
    ("qid", "pid", "given"),
    [
        ("q2", "b", "64 (aten\u00e7\u00e3o e FFN)"),  # "e" (and) inside a remark
        ("q7", "d", "6 tokens e"),
        ("q2", "b", unicodedata.normalize("NFD", "64 atualiza\u00e7\u00f5es")),  # accents as combining marks
        ("q9", "a", "266.240 par\u00e2metros"),
        ("q1", "b", "3,54."),  # a full stop ends the sentence
        ("q2", "b", "64 atualiza\u00e7\u00f5es."),
        ("q2", "b", "cerca de 64"),
        ("q6", "b", "aprox. 0,302"),
        ("q2", "b", "64, aproximadamente"),
        ("q4", "b", "about 128"),
        ("q7", "a", "255,9 aprox."),
        ("q3", "b", "- 1,2247"),  # a sign set apart from its number
        ("q9", "a", "266.240,0"),  # thousands and decimals, pt-BR
        ("q9", "a", "266,240.0"),  # and English
        ("q5", "b", "1e-6 (rms_norm_eps da config)"),
        ("q3", "b", "\u20131,2247"),  # an en dash typed for the minus
        # trial 55: the lesson's and the prompt's own nouns, a remark with its full stop in brackets
        ("q2", "b", "64 deltas"),
        ("q2", "b", "64 escritas"),
        ("q4", "b", "128 RMSNorms"),
        ("q5", "d", "169 RMSNorms"),
        ("q9", "a", "266240 ganhos"),
        ("q9", "a", "266240 gains"),
        ("q1", "b", "3,54 (aprox.)"),
        ("q1", "b", "3.54 (approx.)"),
        ("q1", "b", "3,5355..."),  # the digits of a longer number, the rest left out
        ("q1", "b", "3.5355\u2026"),
    ],
)
def test_a_brazilian_students_natural_number_counts(qid, pid, given):
    """Trial 47: Brazilian students' answers, each meaning the one number it says, were unread:
    "e" (and) in a remark was taken for a scaling word, accents typed as combining marks, a
    final full stop, "cerca de"/"aprox."/"about" before the number, a sign set apart, both
    separators at once, an underscore in a remark."""
    part = _part(qid, pid)
    assert verification.form_problem(part, given) is None, given
    assert verification.judge(part, given)[1] == part.points, given


@pytest.mark.parametrize(
    "given",
    [
        "6 dezenas",
        "6 tens",
        "2 d\u00fazias",
        "3 centenas",
        "1 milion\u00e9simo",
        "301,5 mil\u00e9simos",
        "1 \u00b5",
        "1,22 negativo",
        "6 e meio",
        "6 and a half",
        "6 x",
        "0,3 mil",
        "64 hundredths",
        # trial 48: a second number in words, a rate, a bound, words no list of scaling words had
        "6, sete",
        "64 ou sessenta e cinco",
        "6 or seven",
        "64 per layer",
        "64 por camada",
        "128 normas, uma por subcamada",
        "6 per mille",
        "64 doubled",
        "6 pares",
        "6 mi",
        "6 Tausend",
        "1,51 abaixo de zero",
        "6 \u00bd",
        "64 \u00b2",
        "6 \u4e07",
        "6 or more",
        "6 no m\u00e1ximo",
        "6 e",
    ],
)
def test_a_word_that_changes_the_number_leaves_it_unread_in_either_language(given):
    """Trial 47: "6 dezenas" (sixty) scored a part whose answer is 6, and "1 milionésimo" was
    read as 1 and called outside the tolerance: a word that scales, negates or adds to the
    number leaves it unread, never read as the bare number."""
    assert verification._as_number(given) is None and verification._as_number(given, whole=True) is None


def test_fullwidth_letters_and_option_words_name_the_option():
    """Trial 47: "ｂ", "letra B", "alternativa b" were "not a letter"; "a e c" (Portuguese "and")
    was no list where "a and c" was one."""
    single, several = _part("q1", "a"), _part("q2", "a")
    for written in ("\uff42", "letra B", "alternativa b", "Letra (b)", "op\u00e7\u00e3o b", "option b"):
        assert verification.form_problem(single, written) is None, written
        assert verification.judge(single, written) == verification.judge(single, "b"), written
    for written in ("a e c", "\uff41, \uff43", "alternativas a, c", "letras a e c", "a, c e d", ["a, c"], ["a e c"]):
        assert verification.form_problem(several, written) is None, written
    assert verification.judge(several, "a e c") == verification.judge(several, "a, c")
    for written in ("a) e c)", "(a) e (c)"):  # trial 55: option letters as the prompt writes them
        assert verification.form_problem(several, written) is None, written
        assert verification.judge(several, written) == verification.judge(several, "a, c"), written
    assert verification.judge(several, "a, c e d") == verification.judge(several, "a, c, d")
    assert verification._letters("a e c", True, ("a", "b", "c", "d", "e")) == ["a", "c", "e"]  # e is an option
    # trial 48: an "e" that is ticked, not joining, is no option here; option words before each letter
    for written in ("a, c, e", "a & c & e", "e"):
        assert verification.form_problem(several, written) is not None, written
    for written in ("letra a e letra c", "alternativa a, alternativa c", "option a and option c"):
        assert verification.judge(several, written) == verification.judge(several, "a, c"), written
    assert verification.judge(single, "resposta: letra b") == verification.judge(single, "b")


def test_the_note_on_numbers_read_as_if_quoted_reaches_the_students_report(tmp_path):
    """Trial 57: the note was made, then replaced by the one saying where the file came from
    (None for a file beside the work): neither check nor grade said that 3,54 was read."""
    from grader.runner import Options, grade

    sub = tmp_path / "sub"
    copy_solutions(sub)
    text = (course.solutions_dir() / ANSWERS_FILE).read_text(encoding="utf-8")
    assert "b = 3.5355" in text
    (sub / ANSWERS_FILE).write_text(text.replace("b = 3.5355", "b = 3,54", 1), encoding="utf-8")
    assert [n.id for n in verification.find(sub).notes] == ["question.comma_numbers_read"]
    report = grade(sub, Options(suites=("public", "questions")))
    assert "question.comma_numbers_read" in {n.id for n in report.notes}
    assert next(r for r in report.results if r.name == "q1/hidden/part_b").score == 1


def test_numbers_with_a_decimal_comma_left_out_of_quotes_are_read_with_a_note():
    """Trial 47: ``b = 3,54`` (a decimal comma, as pt-BR writes numbers) made the whole file
    invalid TOML and every auto-graded part scored 0. Such numbers are read as if quoted, and a
    note says where; any other error still leaves the file unread, at its own line."""
    answers = verification.from_toml(b"[q1]\nb = 3,54  # rounded\n[q9]\na = 266.240,0\r\n")
    assert answers.values == {"q1": {"b": "3,54"}, "q9": {"a": "266.240,0"}} and answers.problem is None
    assert len(answers.notes) == 1 and answers.notes[0].params["lines"] == "2, 4"
    broken = verification.from_toml(b'[q1]\nb = 3,54\nc = "open\nd = 1\n')
    assert broken.values == {} and broken.problem is not None and broken.problem.params["line"] == "3"
    assert verification.from_toml(b"[q1]\nb = 3.54\n").notes == ()
    # trial 48: other ways of writing the key and the number; a written answer's text untouched
    for text, value in (
        (b"[q5]\nb = 1,0e-6\n", "1,0e-6"),
        (b"[q3]\nb = - 1,22\n", "- 1,22"),
        (b"q6.b = 0,302\n", "0,302"),
    ):
        assert next(iter(verification.from_toml(text).values.values()))["b"] == value
    kept = verification.from_toml(b'[q7]\nwritten = """\nb = 1,5\n"""\n[q6]\nb = 0,302\n')
    assert (
        kept.values == {"q7": {"written": "b = 1,5\n"}, "q6": {"b": "0,302"}} and kept.notes[0].params["lines"] == "6"
    )


def test_numbers_toml_cannot_read_as_written_are_read_as_if_quoted():
    """Trial 55: a typeset minus sign (``b = \u22121,22``, also an en dash), an exponent's, or a
    number with its thousands apart (``a = 266 240``, ``a = 266,240.0``) made the whole file
    invalid TOML: all 23 auto-graded points lost for one line, though the same text in quotes is
    read. They are read as if quoted, with the note; a number TOML reads stays a number."""
    for line, value in (
        ("[q3]\nb = \u22121,22", "\u22121,22"),
        ("[q3]\nb = \u20131,2247  # rounded", "\u20131,2247"),
        ("[q3]\nb = \u20101,2247", "\u20101,2247"),  # any dash the answer reader takes for a minus
        ("[q3]\nb = \u2212 1.2247", "\u2212 1.2247"),
        ("[q5]\nb = 1.0e\u22126", "1.0e\u22126"),
        ("[q9]\na = 266 240", "266 240"),
        ("[q9]\na = 266\u202f240", "266\u202f240"),
        ("[q9]\na = 266,240.0", "266,240.0"),
    ):
        answers = verification.from_toml(f'{line}\n[q1]\na = "b"\nb = 3.54\n'.encode())
        assert answers.problem is None, line
        assert next(iter(answers.values.values()))["b" if "q9" not in line else "a"] == value
        assert answers.values["q1"] == {"a": "b", "b": 3.54} and answers.notes[0].params["lines"] == "2"


def test_a_thousands_point_reads_the_same_under_a_dotted_or_quoted_key():
    """Trial 55: ``q9.a = 266.240`` (a dotted key) and ``"a" = 266.240`` (a quoted one) were read
    as 266.24, where ``a = 266.240`` under ``[q9]`` is read as written (266240 to a whole-number
    part): one right answer, two grades, and no warning from check."""
    for text in ('q9.a = 266.240\n[q1]\na = "b"\n', '[q9]\n"a" = 266.240\n', "q9 . 'a' = 266.240\n"):
        assert verification.from_toml(text.encode()).values["q9"] == {"a": "266.240"}, text
    # a key of a table inside the question's table is no answer, and is left as TOML read it
    assert verification.from_toml(b"[q9]\nx.a = 266.240\n").values["q9"] == {"x": {"a": 266.24}}


def test_a_notebook_number_written_with_a_decimal_comma_is_read_as_written():
    """Trial 47: ``answers_q6['b'] = 0,302`` in a notebook is a tuple to Python, (0, 302), and
    was "not a number". Written without a space, two whole numbers joined by a comma are the
    student's decimal comma (a tuple is no answer to any part); with a space they stay a tuple."""
    cell = "answers_q1 = {}\nanswers_q1['b'] = 3,54\nanswers_q9 = {}\nanswers_q9['a'] = 266,240\nanswers_q2 = {}\n"
    cell += "answers_q2['b'] = 6, 4\n"
    values = verification.from_notebook(_notebook(cell)).values
    assert values["q1"]["b"] == "3,54" and values["q9"]["a"] == "266,240" and values["q2"]["b"] == (6, 4)
    assert verification.judge(_part("q9", "a"), values["q9"]["a"])[1] == _part("q9", "a").points


def test_check_does_not_call_unreadable_answers_answered(tmp_path):
    """Trial 47: right after listing an answer it cannot read, check said "Every verification
    question has an answer"; it says so only when every answer is there and readable."""
    from grader.cli import _blank_answers, _work_in

    sub = copy_solutions(tmp_path / "sub")
    text = (course.solutions_dir() / ANSWERS_FILE).read_text()
    (sub / ANSWERS_FILE).write_text(text)
    assert "has an answer" in _blank_answers(_work_in(sub), "en")
    (sub / ANSWERS_FILE).write_text(re.sub(r'(?m)^a = "[a-d]"', 'a = "zz"', text, count=1))
    shown = _blank_answers(_work_in(sub), "en")
    assert "cannot read" in shown and "has an answer" not in shown, shown


def test_answers_in_a_cell_that_is_not_python_are_said_unreadable_not_blank():
    """Trial 49: ``answers_q1 = {"a": "b", "b": 3,54}`` (a decimal comma in a dict: a syntax
    error) made both parts say "not answered yet". They say the cell is not valid Python, at
    which line; an earlier cell's answers stand, as the kernel kept them."""
    answers = verification.from_notebook(_notebook('x = 1\nanswers_q1 = {"a": "b", "b": 3,54}\n'))
    problems = {pid: verification.form_problem(_part("q1", pid), answers.values["q1"][pid]) for pid in ("a", "b")}
    assert {p.id for p in problems.values()} == {"question.cell_not_python"}
    assert problems["a"].params["line"] == 2 and problems["a"].params["cell"] == 1
    earlier = verification.from_notebook(_notebook("answers_q2 = {'a': ['a', 'c']}\n", "answers_q2 = {'a': [}\n"))
    assert earlier.values["q2"]["a"] == ["a", "c"]
    # trial 50: a part set after the broken cell raised NameError in the kernel: nothing is kept
    later = verification.from_notebook(_notebook('answers_q1 = {"b": 3,54}\n', 'answers_q1["a"] = "c"\n'))
    assert isinstance(later.values["q1"]["a"], verification.NotPython)
    # and a cell cut at the reading cap is not said to be invalid
    long = "answers_q1 = {'a': 'b'}\n" + "# a long comment\n" * 8000 + "x = (\n"
    cut = verification.from_notebook(_notebook(long)).values.get("q1", {})
    assert not any(isinstance(v, verification.NotPython) for v in cut.values())
