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


def test_verification_questions_are_published_without_answers(site):
    """The question page is generated from the bank at build time: nine questions in the lesson's
    groups, in both languages, with no quiz, answer or key."""
    for name, url, groups in (
        ("verification.md", "verification", ("Basic", "Applied", "Debugging", "System design", "Startup / product")),
        (
            "verification.pt-BR.md",
            "pt-BR/verification",
            ("Básicas", "Aplicadas", "Depuração", "Projeto de sistemas", "Startup / produto"),
        ),
    ):
        source = (DOCS / name).read_text()
        assert "<!-- normlab:questions -->" in source and "**1.**" not in source  # no hand-written copy
        page = html.unescape((site / url / "index.html").read_text(encoding="utf-8"))
        text = " ".join(re.sub(r"<[^>]+>", "", page).split())
        assert re.findall(r"<strong>(\d)\.</strong>", page) == [str(n) for n in range(1, 10)]
        headings = [re.sub(r"<[^>]+>", "", h).strip().rstrip("¶") for h in re.findall(r"<h2[^>]*>(.*?)</h2>", page)]
        assert headings[: len(groups)] == list(groups)
        assert "<quiz>" not in page and "!!! success" not in text


def _bank() -> dict:
    with open(ROOT / "grader" / "questions.toml", "rb") as handle:
        return tomllib.load(handle)


def test_verification_questions_match_the_bank(site):
    """The site publishes the bank's nine questions, with every auto-graded part and option."""
    for url, lang in (("verification", "en"), ("pt-BR/verification", "pt-BR")):
        page = " ".join(html.unescape((site / url / "index.html").read_text(encoding="utf-8")).split())
        lesson = [q for q in _bank()["question"] if q["group"] != "deliverable"]
        assert len(lesson) == 9
        for question in lesson:
            assert " ".join(question["text"][lang].split()) in page, (lang, question["id"])
            for part in question.get("part", ()):
                assert " ".join(part["prompt"][lang].split()) in page, (lang, question["id"], part["id"])
                for option in part.get("option", ()):
                    assert option[lang] in page, (lang, question["id"], part["id"], option["id"])


def test_no_rubric_feedback_or_key_in_the_built_site(site):
    from leakscan import key_lines, rubric_lines

    hidden = rubric_lines() | key_lines()
    assert hidden
    leaks = [
        f"{name}: {line}"
        for name, texts in _built_texts(site).items()
        for line in hidden
        if any(line in text for text in texts)
    ]
    assert leaks == []


# --- navigation and the learner's landing page ---------------------------------------------------


def _nav() -> list:
    from mkdocs.utils.yaml import yaml_load

    return yaml_load((ROOT / "mkdocs.yml").read_text())["nav"]


def _nav_files(entry) -> list[str]:
    if isinstance(entry, str):
        return [entry]
    if isinstance(entry, list):
        return [f for item in entry for f in _nav_files(item)]
    return [f for value in entry.values() for f in _nav_files(value)]


def test_instructor_pages_have_their_own_tab():
    """A learner's navigation holds only the course; teaching material is the last tab, and only there."""
    nav = _nav()
    titles = [next(iter(item)) for item in nav]
    assert titles[0] == "Home" and titles[-1] == "For instructors"
    assert {"Lesson", "Lab"} <= set(titles)
    teaching, learning = _nav_files(nav[-1]), _nav_files(nav[:-1])
    instructor_pages = sorted(p.relative_to(DOCS).as_posix() for p in (DOCS / "instructors").glob("*.md"))
    assert sorted(teaching) == [p for p in instructor_pages if not p.endswith(".pt-BR.md")]
    assert [f for f in learning if f.startswith("instructors/")] == []


NEW_PAGES = ("index", "readings", "concepts/serving-engines")


@pytest.mark.parametrize("stem", NEW_PAGES)
def test_new_pages_exist_in_both_languages(site, stem):
    for name in (f"{stem}.md", f"{stem}.pt-BR.md"):
        assert (DOCS / name).is_file(), name
    url = "" if stem == "index" else f"{stem}/"
    for prefix in ("", "pt-BR/"):
        assert (site / prefix / url / "index.html").is_file(), prefix + url


@pytest.mark.parametrize("name", ["index.md", "index.pt-BR.md"])
def test_the_landing_page_walks_the_learner_through_the_course(name):
    """Every lesson page, then the lab, the questions and the readings, in the order of the nav."""
    links = re.findall(r"\]\(([^)#]+)", (DOCS / name).read_text())
    lesson = _nav_files(next(item for item in _nav() if "Lesson" in item))
    path = [*lesson, "lab/index.md", "verification.md", "checklist.md", "readings.md"]
    missing = [page for page in path if page not in links]
    assert missing == []
    first_seen = [links.index(page) for page in lesson if page != "readings.md"]
    assert first_seen[:5] == sorted(first_seen[:5]), "the five concept pages are listed in reading order"


# --- the model-family table agrees with the reference inspect_config ---------------------------

BANK = ROOT / "solutions" / "configs"


def _family_config(family: dict) -> dict:
    return json.loads((BANK / family["bank"]).read_text()) if "bank" in family else dict(family["config"])


def _family_mismatches(family: dict) -> list[str]:
    """Where a row of site_hooks/families.toml disagrees with solutions/inspect_config on its config."""
    config = _family_config(family)
    report = hook().figures.reference("inspect_config").inspect_config(config)
    claims = {
        "norm_type": family["norm_type"],
        "eps": family["eps"],
        "eps_source": family["eps_key"],
        "placement": family["placement"],
        "final_norm": family["final_norm"],
        "qk_norm": family["qk_norm"],
    }
    out = []
    for key, want in claims.items():
        if report[key] != want:
            out.append(f"{key}: the site says {want!r}, the reference {report[key]!r}")
    per_layer = family["norms_per_layer"]
    if isinstance(per_layer, list):  # encoder-decoder: [encoder, decoder], each stack with its final norm
        text = {**config, **config.get("text_config", {})}
        encoder = text["num_layers"]
        decoder = text.get("num_decoder_layers") or encoder
        expected = per_layer[0] * encoder + 1 + per_layer[1] * decoder + 1
    else:
        expected = per_layer * report["n_layers"] + int(family.get("embedding_norm", False)) + int(family["final_norm"])
    if report["n_norms"] != expected:
        out.append(f"norms: the site's {per_layer} per layer make {expected}, the reference counts {report['n_norms']}")
    return out


FAMILIES = hook().load_families()


@pytest.mark.parametrize("family", FAMILIES, ids=[f["model"] for f in FAMILIES])
def test_family_table_agrees_with_the_reference(family):
    assert _family_mismatches(family) == []


def test_family_table_covers_the_whole_bank():
    assert sorted(f["bank"] for f in FAMILIES if "bank" in f) == sorted(p.name for p in BANK.glob("*.json"))


@pytest.mark.parametrize(
    ("model", "field", "wrong"),
    [
        ("GPT-J-6B", "norms_per_layer", 2),
        ("Falcon-40B", "norms_per_layer", 1),
        ("Qwen3.8-27B / Qwen3.5-27B", "norm_type", "rmsnorm"),
        ("Llama-2-7B", "eps", 1e-6),
        ("Gemma-2-9B", "placement", "pre"),
    ],
)
def test_a_wrong_family_claim_is_caught(model, field, wrong):
    """The check above can fail: the mistakes this table once had, or could have, are each reported."""
    family = {**next(f for f in FAMILIES if f["model"] == model), field: wrong}
    assert _family_mismatches(family) != []


def _mermaid_titles(text: str) -> dict[str, list[str]]:
    """``subgraph id["Title: a, b"]`` -> {id: [a, b]} for the diagrams of a page."""
    return {
        sid: [name.strip() for name in names.split(",")]
        for _, body in code_blocks(text, "mermaid")
        for sid, names in re.findall(r'subgraph (\w+)\["[^":]*: ([^"]+)"\]', body)
    }


@pytest.mark.parametrize("name", ["concepts/placement.md", "concepts/placement.pt-BR.md"])
def test_placement_page_sorts_parallel_blocks_as_the_family_table_does(name):
    """The placement diagram's "one shared norm" and "two norms" models match the checked table."""
    titles = _mermaid_titles((DOCS / name).read_text())
    for sid, norms in (("one", 1), ("two", 2)):
        assert titles[sid], sid
        for model in titles[sid]:
            rows = [f for f in FAMILIES if model in f["model"]]
            assert len(rows) == 1, model
            assert (rows[0]["placement"], rows[0]["norms_per_layer"]) == ("parallel", norms), model


def test_the_running_example_is_named_as_the_model_it_mirrors():
    source = json.loads((BANK / "qwen3.8-27b.json").read_text())["_source"]
    assert "Qwen/Qwen3.5-27B" in source
    for name in ("concepts/normalization.md", "concepts/normalization.pt-BR.md"):
        text = (DOCS / name).read_text()
        assert "Qwen3.5-27B" in text and "qwen3.8-27b.json" in text and "1 + w" in text, name


@pytest.mark.parametrize("lang", ["en", "pt-BR"])
def test_the_family_table_is_on_the_serving_engines_page(site, lang):
    built = site / ("" if lang == "en" else "pt-BR") / "concepts" / "serving-engines" / "index.html"
    page = html.unescape(built.read_text(encoding="utf-8"))
    for family in FAMILIES:
        assert family["model"] in page and family["code"] in page, family["model"]
    assert "<!-- normlab" not in page


# --- figures drawn from the reference at build time ------------------------------------------------


def _figures():
    return hook().figures


FIGURE_NAMES = sorted(_figures().FIGURES)
LANGUAGE_ROOTS = (("en", ""), ("pt-BR", "pt-BR"))


def _figures_command(*args: str) -> subprocess.CompletedProcess[str]:
    """``python site_hooks/figures.py ARGS``, the command the pages show under each figure."""
    command = [sys.executable, str(ROOT / "site_hooks" / "figures.py"), *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)


def test_the_site_has_figures():
    assert {"depth-rms", "stack-trace", "eps-placement"} <= set(FIGURE_NAMES)


@pytest.mark.parametrize("name", FIGURE_NAMES)
def test_figure_is_built_in_both_languages(site, name):
    from xml.etree import ElementTree

    drawings = {lang: (site / prefix / "figures" / f"{name}.svg").read_bytes() for lang, prefix in LANGUAGE_ROOTS}
    for lang, data in drawings.items():
        assert ElementTree.fromstring(data).tag.endswith("svg"), lang
        assert len(re.findall(rb"<path", data)) > 10, f"{lang}: the drawing has no lines"
    assert drawings["en"] != drawings["pt-BR"], "the Portuguese figure has English labels"


@pytest.mark.parametrize("name", FIGURE_NAMES)
def test_figure_is_on_a_page_with_its_command_and_numbers(site, name):
    """Embedded in both languages, with the command that prints its numbers, and those numbers."""
    table = _figures().FIGURES[name].compute()
    for lang in ("en", "pt-BR"):
        sources = [p for p in pages() if p.lang == lang and f"figures/{name}.svg" in p.source.read_text()]
        assert len(sources) == 1, f"{lang}: {[p.source.name for p in sources]}"
        text = sources[0].source.read_text()
        commands = [body.strip() for _, body in code_blocks(text, "bash")]
        assert f"python site_hooks/figures.py {name}" in commands
        assert f"<!-- normlab:table {name} -->" in text
        built = html.unescape((site / sources[0].url / "index.html").read_text(encoding="utf-8"))
        assert all(cell in built for row in table.cells() for cell in row), "the page's table is not the reference's"


@pytest.mark.parametrize("name", FIGURE_NAMES)
def test_figure_command_prints_the_numbers(name):
    result = _figures_command(name)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == _figures().FIGURES[name].compute().text()


def test_figure_command_rejects_an_unknown_name():
    result = _figures_command("no-such-figure")
    assert result.returncode == 2 and "depth-rms" in result.stderr


def test_figure_drawings_are_reproducible():
    figures = _figures()
    figure = figures.FIGURES["eps-placement"]
    table = figure.compute()
    assert figures.svg(figure, table, "en") == figures.svg(figure, table, "en")


def test_figure_numbers_show_what_the_pages_say():
    """The claims made in prose next to each figure hold for the numbers it is drawn from."""
    import numpy as np

    figures = _figures()
    depth = np.array(figures.FIGURES["depth-rms"].compute().rows)  # layer, pre, post
    assert np.all(np.diff(depth[:, 1]) > 0), "pre-norm RMS grows with every layer"
    assert np.allclose(depth[1:, 2], 1.0, atol=1e-3), "post-norm RMS stays at 1"
    trace = np.array(figures.FIGURES["stack-trace"].compute().rows)  # sublayer, pre x/F/sum, post x/F/sum
    assert np.allclose(trace[1:, 4], np.sqrt(figures.WIDTH), atol=1e-3), "post-norm stream at sqrt(C)"
    assert trace[0, 1] < np.sqrt(figures.WIDTH) < trace[-1, 1], "pre-norm stream starts below sqrt(C) and grows past it"
    grad = np.array(figures.FIGURES["grad-depth"].compute().rows)  # depth, none, post, pre
    assert grad[-1, 1] < 1e-10 * grad[0, 1], "without a residual the gradient vanishes"
    assert grad[-1, 2] < 0.05 < grad[0, 2], "post-norm's gradient fades with depth"
    assert np.all((0.5 < grad[:, 3]) & (grad[:, 3] < 2)), "pre-norm's stays near 1"
    eps = np.array(figures.FIGURES["eps-placement"].compute().rows)  # input RMS, inside, outside
    at = {round(np.log10(r), 1): (i, o) for r, i, o in eps}
    assert np.isclose(at[-3.0][0], 1 / np.sqrt(2), atol=1e-3), "eps inside: 1/sqrt(2) at sqrt(eps)"
    assert np.isclose(at[-6.0][1], 0.5, atol=1e-3), "eps outside: 1/2 at eps"
    assert at[0.0] == pytest.approx((1.0, 1.0), abs=1e-4)


def test_the_reference_is_imported_without_leaving_plain_names_behind():
    before = set(sys.modules)
    _figures().reference("stack")
    assert {"stack", "rmsnorm"}.isdisjoint(set(sys.modules) - before)


@pytest.mark.parametrize(
    "marker", ["<!-- normlab:table no-such-figure -->", "<!-- normlab:nothing -->", "text <!-- normlab:families -->"]
)
def test_a_bad_marker_stops_the_build(marker):
    from mkdocs.exceptions import PluginError

    with pytest.raises(PluginError):
        hook().expand_markers(f"# Page\n\n{marker}\n", "en", "page.md")


def test_a_marker_keeps_its_indentation():
    out = hook().expand_markers("??? note\n    <!-- normlab:table depth-rms -->\n", "pt-BR", "page.md")
    assert out.splitlines()[1].startswith("    | camada |")
    assert all(line.startswith("    |") for line in out.splitlines()[1:])


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


def test_the_hand_in_instructions_name_every_module_and_the_answers_file():
    """Where students read what to hand in, every exercise module is named (a page that listed
    six of them cost its readers the others' points) and verification.toml with them."""
    from grader.course import MODULES
    from grader.integrations.student_zip import write_student_zip

    for page in ("students.md", "students.pt-BR.md"):
        text = (ROOT / "site" / page).read_text()
        assert [m for m in MODULES if f"`{m}.py`" not in text] == [], page
        assert "verification.toml" in text
    import tempfile
    import zipfile

    with tempfile.TemporaryDirectory() as tmp:
        bundle = write_student_zip(Path(tmp) / "s.zip")
        with zipfile.ZipFile(bundle) as z:
            readme = next(z.read(n).decode() for n in z.namelist() if n.endswith("/README.md"))
    hand_in = readme.split("## Submit")[1]
    assert [m for m in MODULES if f"`{m}.py`" not in hand_in] == [] and "verification.toml" in hand_in


@pytest.mark.parametrize("name", ["students.md", "students.pt-BR.md"])
def test_the_students_page_names_each_status_as_reports_print_it(name):
    """A reader trial: the page called a crash `CRASH`; every report prints `CRASHED`."""
    from grader.report.reporters import STATUS_MARK

    text = (DOCS / name).read_text(encoding="utf-8")
    named = set(re.findall(r"^\| `([A-Z]+)` \(", text, re.MULTILINE))
    assert named == set(STATUS_MARK.values())


@pytest.mark.parametrize(
    ("name", "row"), [("grading.md", "largest reply accepted"), ("grading.pt-BR.md", "maior resposta")]
)
def test_the_reply_limit_on_the_grading_page_is_the_workers(name, row):
    """A reader trial: the page said 64 MiB; the worker's replies are capped at 8 MiB."""
    from grader.sandbox.limits import Limits

    text = (DOCS / "instructors" / name).read_text(encoding="utf-8")
    line = next(line for line in text.splitlines() if line.startswith(f"| {row}"))
    assert line.endswith(f"| {Limits().result_bytes >> 20} MiB |"), line
