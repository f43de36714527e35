"""The course site: a strict bilingual build, runnable code blocks, and no leaked solutions.

The browser checks (maths, diagrams, language switch, quizzes, no network) are in
``test_site_browser.py``; both files share one build through ``site_build.built_site``.
"""

from __future__ import annotations

import html
import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from leakscan import code_lines
from site_build import BUILD, DOCS, HOOK, ROOT, built_site, code_blocks, hook, pages, run_mkdocs

from grader.stubs import solution_lines


@pytest.fixture(scope="session")
def site() -> Path:
    return built_site()


# --- the build -------------------------------------------------------------------------------


def test_strict_build_writes_both_languages(site):
    for page in pages():
        assert (site / page.url / "index.html").is_file(), f"{page.source.name} was not built at /{page.url}"


def test_every_page_has_its_translation():
    assert hook().missing_translations(DOCS) == []


def test_missing_translations_are_found_both_ways(tmp_path):
    for name in ("a.md", "a.pt-BR.md", "b.md", "sub/c.pt-BR.md"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("# x\n")
    assert hook().missing_translations(tmp_path) == [
        "b.pt-BR.md (translation of b.md)",
        "sub/c.md (translation of sub/c.pt-BR.md)",
    ]


@pytest.mark.parametrize("added", ["extra.md", "extra.pt-BR.md"])
def test_a_page_without_its_translation_fails_the_build(tmp_path, added):
    shutil.copy(ROOT / "mkdocs.yml", tmp_path / "mkdocs.yml")
    shutil.copytree(DOCS, tmp_path / "site")
    shutil.copytree(HOOK.parent, tmp_path / HOOK.parent.name, ignore=shutil.ignore_patterns("__pycache__"))
    (tmp_path / "site" / added).write_text("# Extra\n\nOnly one language.\n")
    result = run_mkdocs(tmp_path / "mkdocs.yml", tmp_path / "out")
    missing = "extra.md" if added.endswith(".pt-BR.md") else "extra.pt-BR.md"
    assert result.returncode != 0
    assert f"{missing} (translation of {added})" in result.stdout + result.stderr


def test_translations_have_the_same_structure():
    """Same code, diagrams, maths, quizzes and anchors on both sides of every page pair."""

    def shape(text: str) -> dict[str, object]:
        return {
            "python": [body.count("\n") for _, body in code_blocks(text, "python")],
            "mermaid": len(code_blocks(text, "mermaid")),
            "bash": len(code_blocks(text, "bash")),
            "quizzes": text.count("<quiz>"),
            "display maths": text.count("$$"),
            "anchors": sorted(re.findall(r"\{ #([\w-]+) \}", text)),
            "links": sorted(re.findall(r"\]\(([^)]+)\)", text)),
        }

    for page in pages():
        if page.lang == "en":
            other = page.source.with_name(page.source.name.replace(".md", ".pt-BR.md"))
            assert shape(page.source.read_text()) == shape(other.read_text()), page.source.name


def test_concept_pages_have_practice_quizzes():
    for page in pages():
        if page.source.parent.name == "concepts":
            assert 2 <= page.source.read_text().count("<quiz>") <= 4, page.source.name


def test_verification_questions_are_published_without_answers():
    for name, groups in (
        ("verification.md", ("Basic", "Applied", "Debugging", "System design", "Startup / product")),
        ("verification.pt-BR.md", ("Básicas", "Aplicadas", "Depuração", "Projeto de sistemas", "Startup / produto")),
    ):
        text = (DOCS / name).read_text()
        assert re.findall(r"^\*\*(\d)\.\*\*", text, re.M) == [str(n) for n in range(1, 10)]
        assert [h.split(" {")[0] for h in re.findall(r"^## (.+)$", text, re.M)] == list(groups)
        assert "<quiz>" not in text and "??? " not in text and "!!! success" not in text


def _questions() -> list[dict]:
    with open(ROOT / "grader" / "questions.toml", "rb") as handle:
        return tomllib.load(handle)["question"]


def test_verification_questions_match_the_graded_notebook(site):
    """The site publishes the same nine questions the release notebook asks (grader/questions.toml)."""
    page = html.unescape((site / "verification" / "index.html").read_text(encoding="utf-8"))
    lesson = [q for q in _questions() if q["group"] != "Deliverable"]
    assert len(lesson) == 9
    for question in lesson:
        assert question["text"] in page, question["id"]


def test_no_rubric_in_the_built_site(site):
    bullets = {
        line.strip().removeprefix("- ").strip()
        for question in _questions()
        for line in question.get("rubric", "").splitlines()
        if len(line.strip()) > 30
    }
    assert bullets
    leaks = [
        f"{name}: {bullet}"
        for name, texts in _built_texts(site).items()
        for bullet in bullets
        if any(" ".join(bullet.split()) in text for text in texts)
    ]
    assert leaks == []


def test_the_nav_has_an_instructors_section():
    from mkdocs.utils.yaml import yaml_load

    nav = yaml_load((ROOT / "mkdocs.yml").read_text())["nav"]
    sections = {next(iter(item)) for item in nav}
    assert {"Home", "Lesson", "Lab", "Students", "Instructors"} <= sections


# --- every Python block on the site runs -------------------------------------------------------

BLOCKS = [
    pytest.param(body, id=f"{page.source.relative_to(DOCS)}:{line}")
    for page in pages()
    for line, body in code_blocks(page.source.read_text(), "python")
]


def test_the_site_has_code_blocks_to_run():
    assert len(BLOCKS) >= 10


@pytest.mark.parametrize("code", BLOCKS)
def test_python_block_runs(code):
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")
    result = subprocess.run(
        [sys.executable, "-W", "error", "-c", code],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, f"the block failed:\n{code}\n--- stderr ---\n{result.stderr}"


# --- hidden stays hidden -----------------------------------------------------------------------


def _built_texts(site: Path) -> dict[str, tuple[str, str]]:
    """Each built page and the search index: (unescaped HTML, text without tags), whitespace-collapsed."""
    out = {}
    for path in [*site.rglob("*.html"), site / "search" / "search_index.json"]:
        raw = path.read_text(encoding="utf-8")
        if path.suffix == ".json":
            raw = " ".join(doc["text"] for doc in json.loads(raw)["docs"])
        unescaped = html.unescape(raw)
        text = html.unescape(re.sub(r"<[^>]+>", "", raw))
        out[str(path.relative_to(site))] = (" ".join(unescaped.split()), " ".join(text.split()))
    return out


def test_no_solution_code_in_the_built_site(site):
    lines = {
        line
        for source in sorted((ROOT / "solutions").glob("*.py"))
        for line in solution_lines(source.read_text())
        if len(line) > 12
    }
    assert len(lines) > 50  # the scan would be meaningless if the markers moved
    leaks = [
        f"{name}: {line}"
        for name, texts in _built_texts(site).items()
        for line in lines
        if any(" ".join(line.split()) in text for text in texts)
    ]
    assert leaks == []


def _code_lines_of_hidden_suites() -> set[str]:
    """Statement lines of the hidden suites, docstrings excluded (those are the students' feedback)."""
    return set().union(*(code_lines(p.read_text(), 21) for p in sorted((ROOT / "grader" / "suites").glob("*.py"))))


def test_no_hidden_test_source_in_the_built_site(site):
    lines = _code_lines_of_hidden_suites()
    assert len(lines) > 50
    leaks = [
        f"{name}: {line}"
        for name, texts in _built_texts(site).items()
        for line in lines
        if any(" ".join(line.split()) in text for text in texts)
    ]
    assert leaks == []


# --- offline and search -----------------------------------------------------------------------


def test_pages_load_nothing_from_other_hosts(site):
    """Static half of the offline check; the browser test watches the real requests."""
    for path in site.rglob("*.html"):
        text = path.read_text(encoding="utf-8")
        loaded = re.findall(r"<script[^>]*\ssrc=\"([^\"]+)\"", text)
        for tag in re.findall(r"<link[^>]*>", text):
            rel = re.search(r'rel="([^"]+)"', tag)
            href = re.search(r'href="([^"]+)"', tag)
            if rel and href and rel.group(1) in ("stylesheet", "icon", "preload", "modulepreload", "manifest"):
                loaded.append(href.group(1))
        assert [url for url in loaded if re.match(r"(https?:)?//", url)] == [], path
        for host in ("fonts.googleapis", "fonts.gstatic", "unpkg.com", "jsdelivr", "cdnjs", "polyfill.io"):
            assert host not in text, f"{path} mentions {host}"


def test_vendored_assets_are_in_the_build(site):
    for relative in (
        "vendor/katex/katex.min.js",
        "vendor/katex/katex.min.css",
        "vendor/katex/contrib/auto-render.min.js",
        "vendor/mermaid/mermaid.min.js",
        "javascripts/normlab-math.js",
    ):
        assert (site / relative).stat().st_size > 0, relative
    assert any((site / "vendor" / "katex" / "fonts").glob("*.woff2"))


def test_vendored_packages_are_pinned_and_extracted_selectively():
    module = hook()
    for package in module.PACKAGES:
        assert re.fullmatch(r"\d+\.\d+\.\d+", package.version), package
        assert package.integrity.startswith("sha512-"), package
    katex = next(p for p in module.PACKAGES if p.name == "katex")
    assert module._destination(katex, "dist/katex.min.js") == "vendor/katex/katex.min.js"
    font = "KaTeX_Main-Regular.woff2"
    assert module._destination(katex, f"dist/fonts/{font}") == f"vendor/katex/fonts/{font}"
    assert module._destination(katex, "dist/fonts/../../../evil.js") is None
    assert module._destination(katex, "src/katex.js") is None


def test_language_links_point_at_the_same_page(site):
    """The header selector links each page to its translation; the head carries no alternates
    (Material would fetch a sitemap.xml next to each of them: a 404 on every page)."""
    english = (site / "concepts" / "placement" / "index.html").read_text(encoding="utf-8")
    portuguese = (site / "pt-BR" / "concepts" / "placement" / "index.html").read_text(encoding="utf-8")
    assert 'href="../../pt-BR/concepts/placement/" hreflang="pt-BR"' in english
    assert 'href="../../../concepts/placement/" hreflang="en"' in portuguese
    for text in (english, portuguese):
        assert '<link rel="alternate"' not in text.partition("</head>")[0]


def test_search_index_covers_both_languages(site):
    index = json.loads((site / "search" / "search_index.json").read_text(encoding="utf-8"))
    assert {"en", "pt"} <= set(index["config"]["lang"])
    locations = [doc["location"] for doc in index["docs"]]
    assert any(loc.startswith("pt-BR/") for loc in locations)
    assert any(not loc.startswith("pt-BR/") for loc in locations)
    assert any("normalização" in doc["text"].lower() for doc in index["docs"])


def test_build_folder_is_the_configured_site_dir():
    assert "site_dir: site-build" in (ROOT / "mkdocs.yml").read_text()
    assert BUILD == ROOT / "site-build"
