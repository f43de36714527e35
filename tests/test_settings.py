"""Settings are read once, in one place: defaults < locale < course file < environment < CLI."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from grader.settings import COURSE_FILE, Settings, SettingsError, load

ROOT = Path(__file__).resolve().parent.parent


def course(tmp_path: Path, text: str) -> Path:
    (tmp_path / COURSE_FILE).write_text(text)
    return tmp_path


def test_defaults_without_a_course_or_environment():
    settings = load(environ={})
    assert settings == Settings()
    assert settings.require_sandbox is False and settings.lang == "en" and settings.course_file is None


def test_the_course_file_sets_grading_and_limits(tmp_path):
    root = course(
        tmp_path, '[grading]\nrequire_sandbox = true\nlanguage = "pt_BR"\njobs = 3\n[limits]\ncall_seconds = 2.5\n'
    )
    settings = load(environ={}, course_dir=root)
    assert (settings.require_sandbox, settings.lang, settings.jobs) == (True, "pt-BR", 3)
    assert settings.limits.call_seconds == 2.5 and settings.course_file == root / COURSE_FILE


def test_the_environment_overrides_the_course_file_and_the_locale_does_not(tmp_path):
    root = course(tmp_path, '[grading]\nrequire_sandbox = true\nlanguage = "pt-BR"\n')
    assert load(environ={"LANG": "en_US.UTF-8"}, course_dir=root).lang == "pt-BR"
    assert load(environ={"LANG": "pt_BR.UTF-8"}).lang == "pt-BR"
    settings = load(environ={"NORMLAB_LANG": "en", "NORMLAB_REQUIRE_SANDBOX": "0"}, course_dir=root)
    assert (settings.lang, settings.require_sandbox) == ("en", False)


def test_a_language_asked_for_by_name_must_be_one_we_speak_but_a_foreign_locale_is_fine(tmp_path):
    root = course(tmp_path, '[grading]\nlanguage = "fr"\n')
    with pytest.raises(SettingsError, match=r"\[grading\] language: 'fr' is not a language"):
        load(environ={}, course_dir=root)
    with pytest.raises(SettingsError, match="NORMLAB_LANG: 'de' is not a language"):
        load(environ={"NORMLAB_LANG": "de"})
    assert load(environ={"LANG": "fr_FR.UTF-8"}).lang == "en"  # a French machine gets English
    assert load(environ={"NORMLAB_LANG": "en_GB.UTF-8"}).lang == "en"
    out = subprocess.run(
        [sys.executable, "-m", "grader", "check", str(ROOT / "exercises"), "--lang", "fr"],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert out.returncode == 2 and "'fr' is not a language normlab speaks" in out.stderr


def test_command_line_values_override_and_unset_ones_do_not():
    settings = load(environ={"NORMLAB_REQUIRE_SANDBOX": "1"})
    assert settings.replace(require_sandbox=None, lang=None).require_sandbox is True
    assert settings.replace(require_sandbox=False).require_sandbox is False


@pytest.mark.parametrize(
    ("text", "environ", "message"),
    [
        ("[grading]\nrequire_sanbox = true\n", {}, "unknown key"),
        ("[limits]\ncall_second = 1\n", {}, "unknown key"),
        ("[grading]\njobs = 0\n", {}, "at least 1"),
        ("[grading\n", {}, "cannot read"),
        ("", {"NORMLAB_REQUIRE_SANDBOX": "maybe"}, "use 1 or 0"),
        ("", {"NORMLAB_UID_BASE": "lots"}, "whole number"),
    ],
)
def test_a_bad_value_is_a_clear_error(tmp_path, text, environ, message):
    with pytest.raises(SettingsError, match=message):
        load(environ=environ, course_dir=course(tmp_path, text))


def test_a_bad_setting_is_a_usage_error_on_the_command_line(tmp_path):
    course(tmp_path, "[grading]\nrequire_sanbox = true\n")
    out = subprocess.run(
        [sys.executable, "-m", "grader", "autograde", "lab", "--course-dir", str(tmp_path)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )
    assert out.returncode == 2 and "unknown key" in out.stderr and "require_sanbox" in out.stderr


def test_no_module_but_settings_reads_a_normlab_variable():
    """The rule behind one settings object: every other module gets its settings passed down.
    The one exception is ``public.py``, shipped alone to students as ``normlab_public.py`` for
    plain pytest, where no settings exist: it reads the reader's locale."""
    readers = []
    for path in sorted((ROOT / "grader").rglob("*.py")):
        if path.name == "public.py":
            continue
        for number, line in enumerate(path.read_text().splitlines(), start=1):
            if "environ" in line and "NORMLAB_" in line and path.name != "settings.py":
                readers.append(f"{path.relative_to(ROOT)}:{number}")
    assert readers == []
