"""The one Jinja environment for every template normlab writes (notebook cells, the nbgrader
config, the student README, HTML feedback).

HTML templates (``*.html.j2``) are autoescaped: they carry student-controlled text. Code and
markdown templates are not: escaping would corrupt the code they write.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

import jinja2

TEMPLATES = Path(__file__).resolve().parent / "templates"


@cache
def environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(TEMPLATES)),
        autoescape=jinja2.select_autoescape(enabled_extensions=("html.j2",), default_for_string=False),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=False,
    )
    env.filters["points"] = lambda value: f"{float(value):g}"
    return env


def render(template: str, **context: Any) -> str:
    """Render ``templates/<template>`` with ``context``."""
    return environment().get_template(template).render(**context)
