"""Shared by the site tests: build the MkDocs site once per test session and list its pages."""

from __future__ import annotations

import functools
import importlib.util
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "site"
BUILD = ROOT / "site-build"
HOOK = ROOT / "site_hooks" / "normlab_site.py"
LANGUAGES = ("en", "pt-BR")
# The browser test serves the build at the root of a local server, so build it for "/".
SITE_URL = "http://127.0.0.1:8000/"


def mkdocs_env() -> dict[str, str]:
    return dict(os.environ, NO_MKDOCS_2_WARNING="1", NORMLAB_SITE_URL=SITE_URL)


def run_mkdocs(config: Path, site_dir: Path) -> subprocess.CompletedProcess[str]:
    """``mkdocs build --strict`` with this interpreter; never raises on a failed build."""
    return subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(config), "-d", str(site_dir)],
        cwd=config.parent,
        env=mkdocs_env(),
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


@functools.cache
def built_site() -> Path:
    """Build ``site/`` into ``site-build/`` (once per session) and return the build folder."""
    result = run_mkdocs(ROOT / "mkdocs.yml", BUILD)
    if result.returncode != 0:
        raise AssertionError(f"mkdocs build --strict failed:\n{result.stdout}\n{result.stderr}")
    return BUILD


@functools.cache
def hook() -> ModuleType:
    """The site's MkDocs hook module, imported from its path (as MkDocs does)."""
    spec = importlib.util.spec_from_file_location("normlab_site_hook", HOOK)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the class is built
    spec.loader.exec_module(module)
    return module


@dataclass(frozen=True)
class Page:
    """One page of the site in one language."""

    source: Path
    """The Markdown file."""
    lang: str
    url: str
    """Its path below the site root, directory style: ``""``, ``"lab/"``, ``"pt-BR/concepts/placement/"``."""

    @property
    def slug(self) -> str:
        """A file-name-friendly name, the same in both languages: ``concepts-placement``."""
        english = self.url.removeprefix("pt-BR/")
        return english.strip("/").replace("/", "-") or "home"


def _url(relative: str) -> str:
    stem = relative[: -len(".md")]
    if stem == "index":
        return ""
    if stem.endswith("/index"):
        return stem[: -len("index")]
    return stem + "/"


def pages() -> list[Page]:
    """Every page of ``site/`` in every language, English first."""
    out = []
    for lang in LANGUAGES:
        for source in sorted(DOCS.rglob("*.md")):
            relative = source.relative_to(DOCS).as_posix()
            is_translation = relative.endswith(".pt-BR.md")
            if (lang == "en") == is_translation:
                continue
            english = relative.replace(".pt-BR.md", ".md")
            url = _url(english)
            out.append(Page(source, lang, url if lang == "en" else f"pt-BR/{url}"))
    return out


FENCE = re.compile(r"^(?P<indent>[ \t]*)```(?P<lang>[\w-]*)[^\n]*\n(?P<body>.*?)^(?P=indent)```[ \t]*$", re.M | re.S)


def code_blocks(text: str, language: str) -> list[tuple[int, str]]:
    """``(line number, dedented source)`` of every fenced block in ``language``."""
    blocks = []
    for match in FENCE.finditer(text):
        if match.group("lang") != language:
            continue
        indent = match.group("indent")
        body = "".join(
            line[len(indent) :] if line.startswith(indent) else line for line in match.group("body").splitlines(True)
        )
        blocks.append((text.count("\n", 0, match.start()) + 1, body))
    return blocks
