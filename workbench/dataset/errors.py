"""The error a user can hit when reading or writing dataset files."""
from __future__ import annotations

from workbench.errors import WorkbenchError


class DatasetError(WorkbenchError):
    """A dataset file or directory is missing, unreadable or not in the expected schema."""
