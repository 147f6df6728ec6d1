"""Showing untrusted text in the app.

Every string that a candidate or a model wrote (source, measurement logs, failure reasons, LLM
reasoning, candidate origins), and every string read from an imported file or the database
(problem ids, GPU keys, error messages that quote them), is hostile: it may carry HTML that runs
script in the browser of whoever opens it, or Markdown that makes the page fetch an outside URL
(`![x](https://...)`). Such text never goes into a Markdown pane. It goes into an HTML pane only
through these helpers, which escape it (`html.escape` with quotes), so the browser shows it
literally. Trusted text (labels written here, numbers formatted here) may stay in Markdown.
"""
from __future__ import annotations

import html
from typing import Iterable


def esc(value: object) -> str:
    """`value` as text, HTML-escaped (quotes included): safe in element content and attributes."""
    return html.escape("" if value is None else str(value), quote=True)


def code(value: object) -> str:
    """Inline code showing `value` literally."""
    return f"<code>{esc(value)}</code>"


def pre(value: object, css_class: str = "") -> str:
    """A preformatted block showing `value` literally (line breaks kept, long lines wrapped)."""
    cls = f" class='{esc(css_class)}'" if css_class else ""
    return f"<pre{cls} style='white-space:pre-wrap;word-break:break-word'>{esc(value)}</pre>"


def lines(parts: Iterable[str]) -> str:
    """HTML fragments (already safe) as one paragraph, one per line."""
    return "<p>" + "<br>".join(parts) + "</p>"
