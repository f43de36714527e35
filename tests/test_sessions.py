"""The suites collected once per process and run again per submission; the reference's answers
computed once per process. Neither may carry anything of one submission into the next."""

import os
import shutil

import numpy as np

from grader import course, sessions
from grader.faults import GraderFault
from grader.model import Status
from grader.proxy import StudentProxy
from grader.reference import AnswerFile, Reference, call_key
from grader.runner import Options, grade
from grader.sandbox.inside.wire import WireCallable
from grader.sandbox.limits import Limits
from grader.submission import prepare


def _statuses(report):
    return {r.name: r.status for r in report.results}


def test_one_collected_session_serves_every_grading_of_a_process():
    grade(course.exercises_dir())
    kept = dict(sessions._sessions)
    grade(course.solutions_dir())
    assert len(kept) == 1
    assert sessions._sessions == kept  # the same session object, not collected again


def test_nothing_of_a_failing_submission_reaches_the_next_one():
    # Stubs, then the reference, then stubs, in one process and one collected session: each
    # report is the same as that submission's report on its own.
    first = grade(course.exercises_dir())
    solved = grade(course.solutions_dir())
    again = grade(course.exercises_dir())
    assert solved.score == solved.max_score
    assert {r.status for r in solved.results} == {Status.PASSED}
    assert first.score == again.score == 0
    assert _statuses(first) == _statuses(again)
    assert [r.messages for r in first.results] == [r.messages for r in again.results]


def test_a_changed_suite_file_is_collected_again(tmp_path):
    suite = tmp_path / "test_extra.py"
    suite.write_text("def test_one(student):\n    pass\n")
    found = sessions.session_for([suite], set(), None, tmp_path)
    assert sessions.session_for([suite], set(), None, tmp_path) is found
    suite.write_text("def test_one(student):\n    pass\n\n\ndef test_two(student):\n    pass\n")
    os.utime(suite, ns=(1, 1))  # a new modification time even on a coarse clock
    renewed = sessions.session_for([suite], set(), None, tmp_path)
    assert renewed is not found
    assert [item.name for item in renewed.items] == ["test_one", "test_two"]


def test_a_select_expression_is_a_session_of_its_own():
    whole = grade(course.solutions_dir())
    some = grade(course.solutions_dir(), Options(select="zero"))
    assert 0 < len(some.results) < len(whole.results)
    assert len(grade(course.solutions_dir()).results) == len(whole.results)


def test_a_cached_reference_answer_is_a_copy():
    reference = Reference(course.solutions_dir())
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    gamma = np.ones(4, dtype=np.float32)
    first = reference.rmsnorm(x, gamma)
    first[...] = 0.0  # a test that scribbles on its expected answer
    second = reference.rmsnorm(x, gamma)
    assert np.abs(second).max() > 0
    assert second is not first


def test_the_cache_key_tells_every_argument_apart():
    x = np.zeros((2, 3), dtype=np.float32)
    keys = [
        call_key("rmsnorm", (x,), {}),
        call_key("layernorm", (x,), {}),
        call_key("rmsnorm", (x.astype(np.float64),), {}),
        call_key("rmsnorm", (x.reshape(3, 2),), {}),
        call_key("rmsnorm", (x + 1,), {}),
        call_key("rmsnorm", (x,), {"eps": 1e-5}),
        call_key("rmsnorm", (x,), {"eps": 1e-6}),
        call_key("block", (x, WireCallable("scale", {"factor": 0.5})), {}),
        call_key("block", (x, WireCallable("scale", {"factor": 0.25})), {}),
        call_key("block", (x, WireCallable("relu", {"factor": 0.5})), {}),
    ]
    assert None not in keys
    assert len(set(keys)) == len(keys)
    assert call_key("rmsnorm", (np.array([object()]),), {}) is None  # never keyed on a pointer


def test_the_cache_key_tells_where_one_arrays_bytes_end_and_reads_any_layout():
    row = np.arange(6, dtype=np.float32)
    split = {call_key("block", (row[:k], row[k:]), {}) for k in range(7)}  # the same bytes in a row
    assert None not in split and len(split) == 7
    x = np.arange(12, dtype=np.float64).reshape(3, 4)
    assert call_key("rmsnorm", (x.T,), {}) == call_key("rmsnorm", (np.ascontiguousarray(x.T),), {})
    assert call_key("rmsnorm", (x[:, ::2],), {}) == call_key("rmsnorm", (x[:, ::2].copy(),), {})


def test_a_cached_answer_of_several_parts_is_a_copy_to_its_last_array():
    reference = Reference(course.solutions_dir())
    rng = np.random.default_rng(1)
    x, gamma, beta, dout = (rng.standard_normal(s) for s in ((2, 4), 4, 4, (2, 4)))
    first = reference.layernorm_backward(dout, x, gamma, beta)
    for part in first:
        part[...] = 0.0
    second = reference.layernorm_backward(dout, x, gamma, beta)
    assert all(np.abs(part).max() > 0 for part in second)


def test_kept_answers_serve_the_next_process_and_only_for_the_same_solution(tmp_path):
    x = np.random.default_rng(0).standard_normal((3, 8))
    gamma = np.ones(8)
    kept = AnswerFile(tmp_path / "kept", course.solutions_dir())
    first = Reference(course.solutions_dir(), kept)
    answer = first.rmsnorm(x, gamma)
    first.close()
    assert kept.path.is_file() and kept.path.stat().st_mode & 0o077 == 0  # hidden values: its owner's only
    assert np.array_equal(kept.load()[call_key("rmsnorm", (x, gamma), {})], answer)
    # A solution that differs in one file keeps its answers under another name.
    changed = tmp_path / "solutions"
    shutil.copytree(course.solutions_dir(), changed, ignore=shutil.ignore_patterns("__pycache__"))
    (changed / "rmsnorm.py").write_text((changed / "rmsnorm.py").read_text() + "\n# changed\n")
    assert AnswerFile(tmp_path / "kept", changed).load() == {}
    assert AnswerFile(tmp_path / "kept", course.solutions_dir()).load() != {}
    # Answers anyone else could have written are not read.
    kept.path.chmod(0o666)
    assert kept.load() == {}


def test_the_kept_answers_live_with_the_hidden_suites():
    kept = sessions.reference_for(course.solutions_dir())._kept
    assert kept is not None and kept.path.parent.parent == course.suites_dir()  # never in a student's copy


def test_a_grader_fault_carries_its_traceback_and_the_next_run_starts_clean(tmp_path):
    # Failed calls keep no drawn traceback (only a grader fault needs one, drawn from the
    # exception); a run stopped by a fault is not reused.
    suite = tmp_path / "test_ours.py"
    suite.write_text("def test_broken(student):\n    return {}['missing_key_in_our_suite']\n")
    found = sessions.session_for([suite], {suite}, None, tmp_path)  # hidden: our own code
    plugin = found.run(StudentProxy(prepare(course.solutions_dir()), None, Limits()), None)
    assert len(plugin.grader_faults) == 1
    assert "test_ours.py" in plugin.grader_faults[0]
    assert "KeyError: 'missing_key_in_our_suite'" in plugin.grader_faults[0]
    assert found.broken
    assert sessions.session_for([suite], {suite}, None, tmp_path) is not found


def test_two_threads_of_one_process_each_get_their_own_report():
    # A Dask worker may run several gradings in threads of one process: they share the one
    # collected session and take turns with it.
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(2) as pool:
        stubs = pool.submit(grade, course.exercises_dir())
        solved = pool.submit(grade, course.solutions_dir())
        stubs_report, solved_report = stubs.result(), solved.result()
    assert solved_report.score == solved_report.max_score
    assert stubs_report.score == 0
    assert len(stubs_report.results) == len(solved_report.results)


def _run_suite(tmp_path, text):
    suite = tmp_path / "test_ours_direct.py"  # a name of its own: pytest reuses a loaded module
    suite.write_text(text)
    found = sessions.session_for([suite], {suite}, None, tmp_path)
    return found.run(StudentProxy(prepare(course.solutions_dir()), None, Limits()), None)


def test_skips_and_warnings_in_a_suite_are_run_as_pytest_would(tmp_path):
    # The collected tests are called directly, not through pytest's run-test protocol: a skip
    # is still a skip, and a warning in our own checking code changes no grade (this process's
    # filters turn warnings into errors, as pyproject.toml asks).
    plugin = _run_suite(
        tmp_path,
        "import warnings\nimport pytest\n\n\n"
        "def test_skips(student):\n    pytest.skip('not today')\n\n\n"
        "def test_warns(student):\n    warnings.warn('overflow in a check', RuntimeWarning)\n\n\n"
        "@pytest.mark.points(3)\ndef test_fails(student, rng, times=2):\n    assert rng.random() > times\n",
    )
    results = {r.name.rsplit("/", 1)[-1]: r for r in plugin.ordered_results()}
    assert results["test_skips"].status is Status.SKIPPED
    assert results["test_warns"].status is Status.PASSED
    assert results["test_fails"].status is Status.FAILED
    assert results["test_fails"].max_score == 3
    assert not plugin.grader_faults


def test_a_public_assert_shows_its_own_message_else_the_explanation(tmp_path):
    suite = tmp_path / "test_ours_asserts.py"
    suite.write_text(
        "import numpy as np\n\n\n"
        "def test_with_message(student):\n    x = np.zeros(50)\n"
        "    assert np.allclose(x, x + 1), 'x changed: keep it as it was'\n\n\n"
        "def test_bare(student):\n    assert [1, 2] == [1, 3]\n"
    )
    found = sessions.session_for([suite], set(), None, tmp_path)  # public: the text is shown
    plugin = found.run(StudentProxy(prepare(course.solutions_dir()), None, Limits()), None)
    texts = {r.name.rsplit("/", 1)[-1]: r.messages[0].params["text"] for r in plugin.ordered_results()}
    assert texts["test_with_message"] == "x changed: keep it as it was"
    assert texts["test_bare"].startswith("assert [1, 2] == [1, 3]") and " at 0x" not in texts["test_bare"]


def test_a_suite_asking_for_a_fixture_we_do_not_make_is_a_grader_fault(tmp_path):
    suite = tmp_path / "test_ours_fixtures.py"
    suite.write_text("def test_one(student, tmp_path):\n    pass\n")
    try:
        sessions.session_for([suite], {suite}, None, tmp_path)
    except GraderFault as fault:
        assert "tmp_path" in str(fault)
    else:
        raise AssertionError("a test that cannot be given its fixtures was collected")


def test_the_graders_own_collection_finds_what_pytest_collects(tmp_path):
    """Without -k the suites are collected without a pytest session (collection.py): the same
    tests, in the same order, with the same points, fixtures and visibility as pytest's."""
    from grader.runner import FINAL, _suite_files

    files, hidden = _suite_files(FINAL)
    extra = tmp_path / "test_marked.py"
    extra.write_text(
        "import pytest\n\npytestmark = pytest.mark.points(2)\n\n\n"
        "def test_module_points(student):\n    pass\n\n\n"
        "@pytest.mark.points(5)\ndef test_own_points(student, rng):\n    pass\n\n\n"
        "def helper_not_a_test(student):\n    pass\n"
    )
    files = [*files, extra]
    own = sessions.SuiteSession(files, hidden, None, tmp_path)
    by_pytest = sessions.SuiteSession(files, hidden, "test_", tmp_path)  # -k: a pytest session
    assert list(own.plugin.meta.items()) == list(by_pytest.plugin.meta.items())
    assert len(own.items) == len(by_pytest.items) > 150
    points = {meta.name.rsplit("/", 1)[-1]: meta.points for meta in own.plugin.meta.values()}
    assert points["test_module_points"] == 2 and points["test_own_points"] == 5


def test_a_suite_that_fails_to_import_is_a_grader_fault_naming_it(tmp_path):
    suite = tmp_path / "test_broken_import.py"
    suite.write_text("import no_such_module_here\n\n\ndef test_one(student):\n    pass\n")
    for select in (None, "one"):
        try:
            sessions.SuiteSession([suite], {suite}, select, tmp_path)
        except GraderFault as fault:
            assert "test_broken_import.py" in str(fault) and "no_such_module_here" in str(fault)
        else:
            raise AssertionError("a suite that cannot be imported was collected")
