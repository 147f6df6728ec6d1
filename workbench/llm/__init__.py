"""Reaching language models: an OpenAI-compatible chat client shared by every LLM user
(the LLM forecaster, LLM kernel generators)."""
from __future__ import annotations

from workbench.llm.client import (ENV_API_KEY, ENV_BASE_URL, ENV_MODEL, ChatClient, ChatResult,
                                  ToolCall, Usage)
from workbench.llm.errors import (LLMConfigError, LLMError, LLMRequestError, LLMServerError,
                                  LLMUnreachableError)

__all__ = [
    "ChatClient", "ChatResult", "ToolCall", "Usage",
    "LLMError", "LLMConfigError", "LLMUnreachableError", "LLMServerError", "LLMRequestError",
    "ENV_BASE_URL", "ENV_MODEL", "ENV_API_KEY",
]
