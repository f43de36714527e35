"""normlab's settings, read once: built-in defaults, then the course file, then the
environment, then the command line (each overrides the one before).

The course file (``normlab.toml``, written into an nbgrader course by ``normlab release``)
holds what an instructor decides for a whole course: whether every sandbox layer is required,
the language of feedback, how many gradings run at once, the limits of one worker, the packages
student code may import, the grading policy (``grader/policy.py``) and Gradescope's test
visibility. Nothing else in the grader reads an environment variable.

Environment variables: ``NORMLAB_REQUIRE_SANDBOX`` (1/0), ``NORMLAB_LANG`` (the POSIX locale
is only a default, below the course file), ``NORMLAB_BWRAP`` (the bubblewrap binary; tests point it at nothing),
``NORMLAB_UID_BASE`` (the first worker uid), ``NORMLAB_WARM_SANDBOX`` (1/0: fork workers from a
warm zygote), ``NORMLAB_SLOT_DIR`` (where worker slots are
locked), ``NORMLAB_COURSE_FILE`` (a course file for gradings outside a course directory).
"""

from __future__ import annotations

import dataclasses
import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from grader.messages import chosen_language, normalize_language
from grader.policy import Policy, PolicyError
from grader.policy import parse as parse_policy
from grader.sandbox.limits import Limits

COURSE_FILE = "normlab.toml"
TRUE_WORDS, FALSE_WORDS = ("1", "true", "yes", "on"), ("0", "false", "no", "off", "")
VISIBILITIES = ("visible", "after_due_date", "after_published", "hidden")
"""Gradescope's test visibilities."""
GRADESCOPE_VISIBILITY = {"public": "visible", "hidden": "after_due_date"}
"""The safe default: a hidden test's name, score and message wait for the due date."""
GRADESCOPE_KEYS = {f"{kind}_tests" for kind in GRADESCOPE_VISIBILITY}


class SettingsError(ValueError):
    """A setting has a value normlab cannot use; the message says which and what is allowed."""


@dataclass(frozen=True)
class Settings:
    """Everything configurable about a run of normlab."""

    require_sandbox: bool = False
    """Refuse to grade (a grader fault) when any isolation layer is missing."""
    lang: str = "en"
    """Language of every message: ``en`` or ``pt-BR``."""
    jobs: int | None = None
    """Gradings at once on this machine (None: one per core)."""
    warm_sandbox: bool = True
    """Fork each worker from its slot's warm zygote (``sandbox/zygote.py``) where the slot's
    emptiness can be checked (as root, with bubblewrap); off: a fresh sandbox per worker."""
    limits: Limits = field(default_factory=Limits)
    bwrap: str | None = None
    """The bubblewrap binary (None: ``bwrap`` on PATH)."""
    uid_base: int = 61000
    """Worker slot ``n`` runs as uid ``uid_base + n`` (when the grader runs as root)."""
    slot_dir: Path | None = None
    """Where the host's slot lock files live (None: the default, see ``sandbox/slots.py``)."""
    packages: tuple[str, ...] = ("numpy", "matplotlib")
    """What student code may import (``[packages] allowed`` in the course file): installed in
    the environment student code runs in, and named when a notebook imports anything else."""
    gradescope_visibility: Mapping[str, str] = field(default_factory=lambda: dict(GRADESCOPE_VISIBILITY))
    """When Gradescope shows each kind of test to the student (``[gradescope]`` in the course
    file): ``public`` and ``hidden`` tests, each one of :data:`VISIBILITIES`."""
    policy: Policy = field(default_factory=Policy)
    """What each exercise and question is worth (``[policy]`` in the course file)."""
    course_file: Path | None = None
    """The course file these settings were read from, if any."""
    course: Mapping[str, Any] = field(default_factory=dict)
    """The course file's other sections, for the parts they configure."""

    def replace(self, **changes: Any) -> Settings:
        """A copy with ``changes``; ``None`` values leave a setting as it is (unset CLI options)."""
        return dataclasses.replace(self, **{k: v for k, v in changes.items() if v is not None})


def _flag(name: str, value: str) -> bool:
    word = value.strip().lower()
    if word in TRUE_WORDS or word in FALSE_WORDS:
        return word in TRUE_WORDS
    raise SettingsError(f"{name}={value!r}: use 1 or 0 (or true/false, yes/no)")


def _integer(name: str, value: object, minimum: int) -> int:
    try:
        number = int(str(value))
    except ValueError:
        raise SettingsError(f"{name}={value!r}: a whole number is required") from None
    if number < minimum:
        raise SettingsError(f"{name}={number}: must be at least {minimum}")
    return number


GRADING_KEYS = {"require_sandbox", "language", "jobs", "warm_sandbox"}
LIMIT_KEYS = {f.name for f in dataclasses.fields(Limits)}


def _from_course_file(path: Path) -> dict[str, Any]:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise SettingsError(f"{path}: cannot read the course file: {exc}") from None
    grading, limits, packages = data.pop("grading", {}), data.pop("limits", {}), data.pop("packages", {})
    gradescope, policy = data.pop("gradescope", {}), data.pop("policy", {})
    sections = (
        ("grading", grading, GRADING_KEYS),
        ("limits", limits, LIMIT_KEYS),
        ("packages", packages, {"allowed"}),
        ("gradescope", gradescope, GRADESCOPE_KEYS),
    )
    for section, keys, allowed in sections:
        unknown = sorted(set(keys) - allowed)
        if unknown:
            raise SettingsError(
                f"{path}: unknown key(s) in [{section}]: {', '.join(unknown)}; known: {sorted(allowed)}"
            )
    values: dict[str, Any] = {"course_file": path, "course": data}
    if "require_sandbox" in grading:
        values["require_sandbox"] = bool(grading["require_sandbox"])
    if "language" in grading:
        values["lang"] = _language(f"{path}: [grading] language", grading["language"])
    if "jobs" in grading:
        values["jobs"] = _integer("[grading] jobs", grading["jobs"], 1)
    if "warm_sandbox" in grading:
        values["warm_sandbox"] = bool(grading["warm_sandbox"])
    if "allowed" in packages:
        allowed = packages["allowed"]
        if not isinstance(allowed, list) or not all(isinstance(p, str) and p.strip() for p in allowed):
            raise SettingsError(f"{path}: [packages] allowed must be a list of package names (pip requirements)")
        values["packages"] = tuple(dict.fromkeys(["numpy", *allowed]))  # numpy is always there
    values["gradescope_visibility"] = _visibility(path, gradescope)
    try:
        values["policy"] = parse_policy(policy)
    except PolicyError as exc:
        raise SettingsError(f"{path}: {exc}") from None
    try:
        values["limits"] = Limits(**limits)
    except TypeError as exc:
        raise SettingsError(f"{path}: [limits]: {exc}") from None
    return values


def _language(where: str, value: object) -> str:
    try:
        return chosen_language(str(value))
    except ValueError as exc:
        raise SettingsError(f"{where}: {exc}") from None


def _visibility(path: Path, section: Mapping[str, Any]) -> dict[str, str]:
    """``[gradescope] public_tests / hidden_tests``: when Gradescope shows each kind of test."""
    chosen = dict(GRADESCOPE_VISIBILITY)
    for kind in GRADESCOPE_VISIBILITY:
        value = section.get(f"{kind}_tests", chosen[kind])
        if value not in VISIBILITIES:
            raise SettingsError(f"{path}: [gradescope] {kind}_tests = {value!r}: use one of {', '.join(VISIBILITIES)}")
        chosen[kind] = value
    return chosen


def _from_environment(environ: Mapping[str, str]) -> dict[str, Any]:
    values: dict[str, Any] = {}
    if "NORMLAB_REQUIRE_SANDBOX" in environ:
        values["require_sandbox"] = _flag("NORMLAB_REQUIRE_SANDBOX", environ["NORMLAB_REQUIRE_SANDBOX"])
    if environ.get("NORMLAB_LANG"):
        values["lang"] = _language("NORMLAB_LANG", environ["NORMLAB_LANG"])
    if "NORMLAB_WARM_SANDBOX" in environ:
        values["warm_sandbox"] = _flag("NORMLAB_WARM_SANDBOX", environ["NORMLAB_WARM_SANDBOX"])
    if environ.get("NORMLAB_BWRAP"):
        values["bwrap"] = environ["NORMLAB_BWRAP"]
    if environ.get("NORMLAB_UID_BASE"):
        values["uid_base"] = _integer("NORMLAB_UID_BASE", environ["NORMLAB_UID_BASE"], 1000)
    if environ.get("NORMLAB_SLOT_DIR"):
        values["slot_dir"] = Path(environ["NORMLAB_SLOT_DIR"])
    return values


def load(
    environ: Mapping[str, str] | None = None, course_dir: Path | None = None, course_file: Path | None = None
) -> Settings:
    """Settings from the course file (``course_file``, else ``course_dir/normlab.toml``, else
    ``NORMLAB_COURSE_FILE``) and the environment. Raises :class:`SettingsError` on a value that
    cannot be used."""
    environ = os.environ if environ is None else environ
    if course_file is not None:
        if not course_file.is_file():
            raise SettingsError(f"{course_file}: no such course file")
        return Settings(**(_from_locale(environ) | _from_course_file(course_file) | _from_environment(environ)))
    path = course_dir / COURSE_FILE if course_dir is not None else None
    if path is None and environ.get("NORMLAB_COURSE_FILE"):
        path = Path(environ["NORMLAB_COURSE_FILE"])
    values = _from_course_file(path) if path is not None and (path.is_file() or course_dir is None) else {}
    return Settings(**(_from_locale(environ) | values | _from_environment(environ)))


def _from_locale(environ: Mapping[str, str]) -> dict[str, Any]:
    """The POSIX locale's language: the default when neither the course nor NORMLAB_LANG says."""
    for variable in ("LC_ALL", "LC_MESSAGES", "LANG"):
        if environ.get(variable):
            return {"lang": normalize_language(environ[variable])}
    return {}


@cache
def current() -> Settings:
    """The settings of this process, read from its environment the first time they are needed."""
    return load()
