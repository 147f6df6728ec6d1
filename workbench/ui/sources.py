"""Changing raw Bokeh models (ColumnDataSources, spans) from any Panel callback.

Panel runs some callbacks without the Bokeh document lock (a widget event that arrives while the
session is busy is dispatched as a lock-free coroutine). Panel's own widgets and panes cope with
that, but assigning a property of a raw Bokeh model there raises `RuntimeError: _pending_writes
should be non-None ...` and aborts the rest of the callback. Every such assignment in the views
goes inside `bokeh_edits()`: it holds the document with `panel.io.unlocked`, which collects the
changes and writes them to the browser itself; with the lock held, outside a server, or in a
notebook the assignments simply happen.
"""
from __future__ import annotations

from contextlib import contextmanager
from typing import Any, Iterator, Mapping

import panel as pn
from bokeh.models import ColumnDataSource


@contextmanager
def bokeh_edits() -> Iterator[None]:
    """Context in which raw Bokeh model properties may be set, with or without the lock."""
    with pn.io.unlocked():
        yield


def set_data(source: ColumnDataSource, data: Mapping[str, Any]) -> None:
    """Replace `source.data` (see `bokeh_edits`)."""
    with bokeh_edits():
        source.data = dict(data)
