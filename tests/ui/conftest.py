"""Fixtures of the app tests."""
from __future__ import annotations

import pytest
from hostile_fixtures import make_hostile_store


@pytest.fixture
def hostile_store(tmp_path):
    """A store whose candidate texts carry script payloads (see hostile_fixtures)."""
    return make_hostile_store(tmp_path / "hostile.sqlite")
