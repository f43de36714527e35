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
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
import shutil
import subprocess
import tarfile
import tempfile
from dataclasses import dataclass
from pathlib import Path

from mkdocs.exceptions import PluginError
from mkdocs.plugins import get_plugin_logger
from mkdocs.structure.files import File

log = get_plugin_logger("normlab_site")

HERE = Path(__file__).resolve().parent
OWN_ASSETS = HERE / "assets"
DEFAULT_EXTRA_LANGUAGES = ("pt-BR",)
HEAD_ALTERNATE = re.compile(r'[ \t]*<link rel="alternate" href="[^"]*" hreflang="[^"]*">\n?')


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


# --- MkDocs events ---------------------------------------------------------------------------


def on_config(config):
    problems = missing_translations(config.docs_dir, _extra_languages(config))
    if problems:
        raise PluginError("missing translations (every page needs every language):\n  " + "\n  ".join(problems))
    return config


def on_files(files, config):
    for file in asset_files(config):
        if files.get_file_from_path(file.src_uri) is None:
            files.append(file)
    return files


def on_post_page(output, page, config):
    head, sep, body = output.partition("</head>")
    return HEAD_ALTERNATE.sub("", head) + sep + body
