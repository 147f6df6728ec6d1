"""Remove anything that looks like a credential from text a candidate could have written.

A candidate's failure reason and its worker's log are stored with its measurement, shown in
the app and, in a search with a language model, sent back to the model server in the next
prompt. A worker has no secrets in its environment (contain.minimal_env), but text is scrubbed
anyway before it is stored or sent: defence in depth against a key read from a file, a
process or a future hole.

What is replaced by `REDACTED`:
- the values of this process's environment variables whose names contain KEY, TOKEN, SECRET,
  PASSWORD, PASSWD, CREDENTIAL or AUTH (values of 8 characters or more);
- well-known key shapes: OpenAI / Anthropic `sk-...`, Hugging Face `hf_...`, GitHub `ghp_...`
  and `github_pat_...`, AWS access key ids, Slack tokens, Google API keys, JSON web tokens,
  PEM private keys;
- long high-entropy tokens: 32 or more characters of letters, digits and `+=_-` with upper-
  and lower-case letters and digits and over 4.5 bits of entropy per character (hex digests
  such as candidate ids stay: 16 symbols carry at most 4 bits).
"""
from __future__ import annotations

import math
import os
import re
from collections import Counter

REDACTED = "[redacted]"
_NAME_WORDS = ("KEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL", "AUTH")
_PATTERNS = [re.compile(p) for p in (
    r"-----BEGIN [A-Z ]*PRIVATE KEY-----.*?(?:-----END [A-Z ]*PRIVATE KEY-----|\Z)",
    r"\bsk-[A-Za-z0-9_\-]{16,}",
    r"\bhf_[A-Za-z0-9]{16,}",
    r"\bgh[pousr]_[A-Za-z0-9]{20,}",
    r"\bgithub_pat_[A-Za-z0-9_]{20,}",
    r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b",
    r"\bxox[abprs]-[A-Za-z0-9\-]{10,}",
    r"\bAIza[0-9A-Za-z_\-]{35}",
    r"\beyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}",
)]
_PATTERNS[0] = re.compile(_PATTERNS[0].pattern, re.S)
_TOKEN = re.compile(r"[A-Za-z0-9+=_\-]{32,}")


def _entropy(s: str) -> float:
    n = len(s)
    return -sum(c / n * math.log2(c / n) for c in Counter(s).values())


def _looks_random(tok: str) -> bool:
    return (any(c.isupper() for c in tok) and any(c.islower() for c in tok) and any(c.isdigit() for c in tok)
            and _entropy(tok) > 4.5)


def secret_values(env: dict[str, str] | None = None) -> list[str]:
    """Values of the variables of `env` (default: this process's environment) whose names say
    they hold a secret; longest first."""
    env = os.environ if env is None else env
    vals = {v for k, v in env.items() if len(v) >= 8 and any(w in k.upper() for w in _NAME_WORDS)}
    return sorted(vals, key=len, reverse=True)


def scrub(text: str | None, env: dict[str, str] | None = None) -> str:
    """`text` with every credential-like part replaced by REDACTED (see module doc)."""
    if not text:
        return text or ""
    for v in secret_values(env):
        if v in text:
            text = text.replace(v, REDACTED)
    for pat in _PATTERNS:
        text = pat.sub(REDACTED, text)
    return _TOKEN.sub(lambda m: REDACTED if _looks_random(m.group(0)) else m.group(0), text)
