"""Typed errors a user can hit. Every message says what to do next."""
from __future__ import annotations


class WorkbenchError(Exception):
    """Base class of every error the workbench raises on purpose."""


class ProblemFileError(WorkbenchError):
    """A problem file does not follow the KernelBench contract."""


class CandidateError(WorkbenchError):
    """A candidate source cannot be used (no ModelNew, syntax error, ...)."""


class ConfigError(WorkbenchError):
    """A configuration value is missing or invalid."""


class StoreError(WorkbenchError):
    """The database cannot be opened, migrated or written."""


class NotFittedError(WorkbenchError):
    """A model or policy was used before it was fitted or calibrated."""


class ParseError(WorkbenchError):
    """An LLM answer could not be parsed into a forecast."""
