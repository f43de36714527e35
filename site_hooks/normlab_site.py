"""MkDocs hook for the normlab site: a translation check and offline maths/diagram assets.

1. Every page must exist in every language: ``page.md`` needs ``page.pt-BR.md`` and the other
   way round. A missing one stops the build (``on_config``), instead of the i18n plugin quietly
   serving English on the Portuguese site.
2. KaTeX and Mermaid come from the npm registry at build time, pinned by version and by the
   tarball's sha512, and are cached outside the repository (``NORMLAB_SITE_VENDOR``, default
   ``~/.cache/normlab/site-vendor``). ``on_files`` adds them, and the small scripts in
   ``site_hooks/assets/``, to the build, so a page loads nothing from a CDN. Nothing
   third-party is committed to git.
3. The per-page ``<link rel="alternate" hreflang>`` tags are dropped from each page's head
   (``on_post_page``): Material's script fetches ``sitemap.xml`` next to every such link, which
   with mkdocs-static-i18n's per-page links is a 404 on every page. The header's language
   selector keeps its per-page links, so switching language still lands on the same page.
4. Figures come from the reference solutions at build time (``site_hooks/figures.py``): each
   language build adds ``figures/<name>.svg`` drawn with that language's labels (``on_files``),
   so a page in either language embeds the same path. Nothing in a figure is typed by hand.
5. Tables generated from data replace markers in the Markdown (``on_page_markdown``):
   ``<!-- normlab:table NAME -->`` prints the numbers of figure NAME, and
   ``<!-- normlab:families -->`` the model-family table of ``site_hooks/families.toml``, which
   the tests check against the reference ``inspect_config``.
"""

from __future__ import annotations

import base64
import hashlib
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
from dataclasses import dataclass
from pathlib import Path

import tomllib
from mkdocs.exceptions import PluginError
from mkdocs.plugins import get_plugin_logger
from mkdocs.structure.files import File

log = get_plugin_logger("normlab_site")

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
OWN_ASSETS = HERE / "assets"
DEFAULT_EXTRA_LANGUAGES = ("pt-BR",)
HEAD_ALTERNATE = re.compile(r'[ \t]*<link rel="alternate" href="[^"]*" hreflang="[^"]*">\n?')
MARKER = re.compile(r"^(?P<indent>[ \t]*)<!-- normlab:(?P<kind>[\w-]+)(?: (?P<arg>[\w-]+))? -->[ \t]*$", re.M)
FAMILIES = HERE / "families.toml"
DEFAULT_LANGUAGE = "en"


def _load_figures():
    """``figures.py`` next to this file (MkDocs loads hooks by path, so it is not importable by name)."""
    spec = importlib.util.spec_from_file_location("normlab_site_figures", HERE / "figures.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the class is built
    spec.loader.exec_module(module)
    return module


figures = _load_figures()


@dataclass(frozen=True)
class Package:
    """One npm package and the files of its tarball the site uses."""

    name: str
    version: str
    integrity: str
    """The registry's ``dist.integrity`` of the tarball (checked after download)."""
    files: dict[str, str]
    """Tarball path (below ``package/``) -> site path; a path ending in ``/`` copies a folder."""


PACKAGES = (
    Package(
        "katex",
        "0.16.47",
        "sha512-Eeo8Ys1doU1z+x8AZsPpQu+p/QcZBI5PeOo7QGQdy2x2m0MU/hYagBbGOmXwr5KVbEfVuWv9LpnQWeehogurjg==",
        {
            "dist/katex.min.js": "vendor/katex/katex.min.js",
            "dist/katex.min.css": "vendor/katex/katex.min.css",
            "dist/contrib/auto-render.min.js": "vendor/katex/contrib/auto-render.min.js",
            "dist/fonts/": "vendor/katex/fonts/",
            "LICENSE": "vendor/katex/LICENSE",
        },
    ),
    Package(
        "mermaid",
        "11.17.2",
        "sha512-V6K3C8EBdEsPFZXSKMJe6ppQOENxuHARr9GvHX4hh47lAbhMRD9qf4oEK7LoaRQxULMa80/qt5gHO73aCleBBg==",
        {
            "dist/mermaid.min.js": "vendor/mermaid/mermaid.min.js",
            "LICENSE": "vendor/mermaid/LICENSE",
        },
    ),
)


# --- 1. translations -------------------------------------------------------------------------


def missing_translations(docs_dir: str | Path, languages: tuple[str, ...] = DEFAULT_EXTRA_LANGUAGES) -> list[str]:
    """Pages that lack a translation, as ``"<missing file> (translation of <existing file>)"``."""
    docs = Path(docs_dir)
    pages = {p.relative_to(docs).as_posix() for p in docs.rglob("*.md")}
    problems = []
    for page in sorted(pages):
        stem = page[: -len(".md")]
        suffix = next((lang for lang in languages if stem.endswith(f".{lang}")), None)
        if suffix is None:
            wanted = [f"{stem}.{lang}.md" for lang in languages]
        else:
            base = stem[: -len(suffix) - 1]
            wanted = [f"{base}.md"] + [f"{base}.{lang}.md" for lang in languages if lang != suffix]
        problems += [f"{want} (translation of {page})" for want in wanted if want not in pages]
    return problems


def _extra_languages(config) -> tuple[str, ...]:
    i18n = config.plugins.get("i18n")
    if i18n is None:
        return DEFAULT_EXTRA_LANGUAGES
    return tuple(lang.locale for lang in i18n.config.languages if not lang.default)


# --- 2. vendored assets ----------------------------------------------------------------------


def cache_root() -> Path:
    if os.environ.get("NORMLAB_SITE_VENDOR"):
        return Path(os.environ["NORMLAB_SITE_VENDOR"])
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "normlab" / "site-vendor"


def _integrity(path: Path) -> str:
    return "sha512-" + base64.b64encode(hashlib.sha512(path.read_bytes()).digest()).decode()


def _download(package: Package, into: Path) -> Path:
    """``npm pack`` the exact version into ``into`` and check the tarball's sha512."""
    npm = shutil.which("npm")
    if npm is None:
        raise PluginError(
            f"npm is needed once to fetch {package.name}@{package.version} for the site's offline assets "
            "(Debian: apt-get install nodejs npm), or point NORMLAB_SITE_VENDOR at a filled cache"
        )
    spec = f"{package.name}@{package.version}"
    run = subprocess.run(
        [npm, "pack", "--json", "--ignore-scripts", "--pack-destination", str(into), spec],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    if run.returncode != 0:
        raise PluginError(f"npm pack {spec} failed:\n{run.stderr.strip()}")
    tarball = into / json.loads(run.stdout)[0]["filename"]
    if _integrity(tarball) != package.integrity:
        raise PluginError(f"{spec}: the downloaded tarball does not match the pinned sha512")
    return tarball


def _destination(package: Package, inner: str) -> str | None:
    """Where tarball member ``package/<inner>`` goes in the site, or None to leave it out."""
    for source, dest in package.files.items():
        if inner == source:
            return dest
        if source.endswith("/") and inner.startswith(source) and "/" not in inner[len(source) :]:
            return dest + inner[len(source) :]
    return None


def _extract(package: Package, tarball: Path, target: Path) -> None:
    """Copy only the listed members; destinations come from our table, never from the tarball."""
    with tarfile.open(tarball, "r:gz") as tar:
        for member in tar.getmembers():
            dest = _destination(package, member.name.removeprefix("package/")) if member.isfile() else None
            if dest is None or not member.name.startswith("package/"):
                continue
            out = target / dest
            out.parent.mkdir(parents=True, exist_ok=True)
            with tar.extractfile(member) as data:  # type: ignore[union-attr]
                out.write_bytes(data.read())
    for source, dest in package.files.items():
        if not (target / dest).exists():
            raise PluginError(f"{package.name}@{package.version}: {source} is not in the tarball")


def ensure_package(package: Package, root: Path | None = None) -> Path:
    """The folder holding ``package``'s site files (``vendor/<name>/...``), fetched when missing."""
    root = root or cache_root()
    folder = root / f"{package.name}-{package.version}"
    if (folder / ".complete").is_file():
        return folder
    root.mkdir(parents=True, exist_ok=True)
    log.info(f"fetching {package.name}@{package.version} from the npm registry (once, cached in {root})")
    with tempfile.TemporaryDirectory(dir=root) as scratch:
        tarball = _download(package, Path(scratch))
        staging = Path(scratch) / "files"
        _extract(package, tarball, staging)
        (staging / ".complete").write_text(package.integrity + "\n")
        try:
            staging.rename(folder)
        except OSError:  # another build filled the cache meanwhile
            if not (folder / ".complete").is_file():
                raise
    return folder


def asset_files(config) -> list[File]:
    """The vendored files and our own scripts, as MkDocs files of the build."""
    out = []
    for folder in [ensure_package(p) for p in PACKAGES] + [OWN_ASSETS]:
        for path in sorted(folder.rglob("*")):
            if path.is_file() and path.name != ".complete":
                out.append(
                    File(
                        path.relative_to(folder).as_posix(),
                        src_dir=str(folder),
                        dest_dir=config.site_dir,
                        use_directory_urls=config.use_directory_urls,
                    )
                )
    return out


# --- 4. figures ------------------------------------------------------------------------------


def current_language(config) -> str:
    """The language of the build in progress: mkdocs-static-i18n builds once per language."""
    i18n = config.plugins.get("i18n")
    return getattr(i18n, "current_language", None) or DEFAULT_LANGUAGE


SCRATCH: list[tempfile.TemporaryDirectory] = []
"""Where this invocation's figures are drawn (mkdocs-static-i18n needs files on disk); see on_shutdown."""


def figure_files(config) -> list[File]:
    """Every figure as SVG in the current language, at ``figures/<name>.svg`` of that language's site."""
    lang = current_language(config)
    prefix = "" if lang == DEFAULT_LANGUAGE else f"{lang}/"
    SCRATCH.append(tempfile.TemporaryDirectory(prefix=f"normlab-figures-{lang}-"))
    folder = Path(SCRATCH[-1].name)
    (folder / "figures").mkdir()
    out = []
    for figure in figures.FIGURES.values():
        (folder / "figures" / f"{figure.name}.svg").write_bytes(figures.svg(figure, figure.compute(), lang))
        file = File(f"figures/{figure.name}.svg", str(folder), config.site_dir, use_directory_urls=False)
        file.dest_uri = f"{prefix}figures/{figure.name}.svg"  # the pt-BR pages get the pt-BR drawing
        out.append(file)
    return out


# --- 5. generated tables ----------------------------------------------------------------------

NORM_WORDS = {
    "layernorm": "LayerNorm: γ, β",
    "rmsnorm": "RMSNorm: γ",
    "gemma_rmsnorm": "RMSNorm: 1 + w",
}
PLACEMENT_WORDS = {
    "en": {
        "pre": "pre-norm",
        "post": "post-norm",
        "sandwich": "sandwich",
        "post_sublayer": "norm on the output",
        "parallel": "parallel",
    },
    "pt-BR": {
        "pre": "pre-norm",
        "post": "post-norm",
        "sandwich": "sanduíche",
        "post_sublayer": "norm na saída",
        "parallel": "paralela",
    },
}
FAMILY_HEADERS = {
    "en": ("model (its modelling code)", "norm: scale", "eps and its config key", "placement", "norms per layer",
           "QK-norm"),
    "pt-BR": ("modelo (o seu código)", "norm: escala", "eps e a sua chave no config", "posição", "norms por camada",
              "QK-norm"),
}
YES_NO = {"en": ("yes", "no"), "pt-BR": ("sim", "não")}
ENC_DEC = {"en": "{} (encoder), {} (decoder)", "pt-BR": "{} (encoder), {} (decoder)"}
NO_KEY = {"en": "no key: library default", "pt-BR": "sem chave: padrão da biblioteca"}
TRANSFORMERS_MODELS = "https://github.com/huggingface/transformers/blob/main/src/transformers/models/"


def load_families(path: Path = FAMILIES) -> list[dict]:
    with open(path, "rb") as handle:
        return tomllib.load(handle)["family"]


def families_markdown(lang: str, families: list[dict] | None = None) -> str:
    """The model-family table, one row per entry of ``families.toml``.

    Six columns, so that it fits the text column; the model's name links to its modelling code.
    """
    rows = ["| " + " | ".join(FAMILY_HEADERS[lang]) + " |", "|" + " --- |" * len(FAMILY_HEADERS[lang])]
    for f in families if families is not None else load_families():
        key = NO_KEY[lang] if f["eps_key"] == "default" else f"`{f['eps_key']}`"
        per_layer = f["norms_per_layer"]
        per_layer = ENC_DEC[lang].format(*per_layer) if isinstance(per_layer, list) else str(per_layer)
        cells = [
            f"[{f['model']}]({TRANSFORMERS_MODELS}{f['code']})",
            NORM_WORDS[f["norm_type"]],
            f"{f['eps']:g}<br>{key}",
            PLACEMENT_WORDS[lang][f["placement"]],
            per_layer,
            YES_NO[lang][0 if f["qk_norm"] else 1],
        ]
        rows.append("| " + " | ".join(cells) + " |")
    return "\n".join(rows)


# --- 6. the verification questions, from the question bank -----------------------------------

QUESTION_WORDS = {
    "en": {
        "reread": "Reread",
        "points": "{} point(s)",
        "choice": "one option",
        "multiple": "tick every true statement",
        "number": "a number",
        "whole": "a whole number",
        "written": "Written, graded by hand",
    },
    "pt-BR": {
        "reread": "Releia",
        "points": "{} ponto(s)",
        "choice": "uma opção",
        "multiple": "marque cada afirmação verdadeira",
        "number": "um número",
        "whole": "um número inteiro",
        "written": "Escrita, corrigida à mão",
    },
}


def public_bank() -> dict:
    """The question bank without its keys, feedback or rubrics (``grader.questions.public_data``):
    the site never sees anything else of it."""
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    from grader import questions

    return questions.public_data(questions.load())


def _question_markdown(q: dict, lang: str) -> list[str]:
    words = QUESTION_WORDS[lang]
    lines = [f"**{q['number']}.** {q['text'][lang]}", ""]
    for part in q["part"]:
        points = words["points"].format(f"{part['points']:g}")
        form = words["whole" if part.get("whole") else part["kind"]]
        lines += [f"- **({part['id']})** {part['prompt'][lang]} *({form}; {points})*"]
        lines += [f"    - **{o['id']})** {o[lang]}" for o in part["option"]]
    if "written" in q:
        points = words["points"].format(f"{q['written']['points']:g}")
        lines.append(f"- **{words['written']}** *({points})*: {q['written']['prompt'][lang]}")
    if q["reread"]:
        links = ", ".join(f"[{r[lang]}]({r['page']})" for r in q["reread"])
        lines += ["", f"*{words['reread']}:* {links}"]
    return [*lines, ""]


def questions_markdown(lang: str, bank: dict | None = None) -> str:
    """The lesson's verification questions, by group: text, auto-graded parts with their options,
    the written part, and where to reread. Never a key."""
    bank = bank if bank is not None else public_bank()
    lines: list[str] = []
    group = None
    for q in bank["question"]:
        if q["group"] == "deliverable":
            continue
        if q["group"] != group:
            group = q["group"]
            lines += [f"## {bank['groups'][group][lang]} {{ #{group} }}", ""]
        lines += _question_markdown(q, lang)
    return "\n".join(lines)


def expand_markers(markdown: str, lang: str, where: str) -> str:
    """Replace every ``<!-- normlab:... -->`` marker line; an unknown one stops the build.

    The generated lines keep the marker's indentation, so a marker inside an admonition or a
    collapsible block stays inside it.
    """

    def one(match: re.Match) -> str:
        kind, arg = match.group("kind"), match.group("arg")
        if kind == "families" and arg is None:
            text = families_markdown(lang)
        elif kind == "questions" and arg is None:
            text = questions_markdown(lang)
        elif kind == "table" and arg in figures.FIGURES:
            text = figures.FIGURES[arg].compute().markdown(lang)
        else:
            raise PluginError(f"{where}: unknown marker {match.group(0).strip()}")
        return "\n".join(match.group("indent") + line for line in text.splitlines())

    out = MARKER.sub(one, markdown)
    if "<!-- normlab" in out:  # a misspelt marker would otherwise vanish as an HTML comment
        raise PluginError(f"{where}: a normlab marker is not on a line of its own or is misspelt")
    return out


# --- MkDocs events ---------------------------------------------------------------------------


def on_config(config):
    problems = missing_translations(config.docs_dir, _extra_languages(config))
    if problems:
        raise PluginError("missing translations (every page needs every language):\n  " + "\n  ".join(problems))
    return config


def on_files(files, config):
    for file in asset_files(config) + figure_files(config):
        if files.get_file_from_path(file.src_uri) is None:
            files.append(file)
    return files


def on_page_markdown(markdown, page, config, files):
    return expand_markers(markdown, current_language(config), page.file.src_uri)


def on_shutdown():
    while SCRATCH:
        SCRATCH.pop().cleanup()


def on_post_page(output, page, config):
    head, sep, body = output.partition("</head>")
    return HEAD_ALTERNATE.sub("", head) + sep + body
