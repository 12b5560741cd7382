"""Keeping secrets out of everything ink writes down: session files, logs, error messages, tracebacks.

Two kinds of secret are removed from text:

- **known secrets**: the values ink was given (the API key in use, every provider key in the environment
  and in the user config). They are replaced wherever they occur, whatever surrounds them.
- **recognisable secrets**: credentials in the shape of an HTTP header (``Authorization: Bearer ...``,
  ``x-api-key: ...``), the unmistakable token formats of the model providers (``sk-ant-api03-...``,
  ``sk-proj-...``) and of the services a developer's shell and files hold tokens for (GitHub ``ghp_``,
  ``gho_``, ``ghu_``, ``ghs_``, ``ghr_``, ``github_pat_``; GitLab ``glpat-``; Slack ``xox?-``; AWS access
  key ids ``AKIA``/``ASIA`` and a secret access key where it is named; Google ``AIza``; Stripe
  ``sk_live_``/``rk_live_`` and their test twins; npm ``npm_``; PyPI ``pypi-AgE...``), so a token ink was
  never told about is still not copied into a session file or a log.

Every occurrence becomes ``[REDACTED]``. Redaction happens where text leaves the process (the session
writer, the log handler, the command line's error output); the live conversation is not changed, so the
model and the user still see what a tool really printed.

This module imports nothing of ink: every layer may use it.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable, Sequence
from functools import cache

REDACTED = "[REDACTED]"
MIN_SECRET_LENGTH = 8  # shorter strings would blank out ordinary words
# Every token format of ``_key_formats`` holds one of these.
_MARKERS = ("sk-", "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_", "glpat-", "xox", "AKIA", "ASIA",
            "AIza", "_live_", "_test_", "npm_", "pypi-")  # fmt: skip


@cache  # compiled on first use: the command line imports this module on every start
def _header() -> re.Pattern[str]:
    """Header-shaped credentials: the scheme (Bearer, Basic, ...) is kept, the credential goes."""
    return re.compile(
        r"(?i)(\b(?:proxy-)?authorization\b[\"']?\s*[:=]\s*[\"']?(?:bearer|basic|token|digest)\s+)"
        r"([A-Za-z0-9._~+/=-]{8,})"
        r"|(\b(?:x-api-key|api-key|x-goog-api-key)\b[\"']?\s*[:=]\s*[\"']?)([A-Za-z0-9._~+/=-]{8,})"
    )


@cache
def _key_formats() -> re.Pattern[str]:
    """Token formats that cannot be mistaken for anything else: a fixed prefix, then a long run of the
    token's own alphabet (the lengths are the services' own, or their documented minimum)."""
    return re.compile(
        r"\bsk-ant-[a-z]+\d*-[A-Za-z0-9_-]{20,}"  # Anthropic
        r"|\bsk-(?:proj|svcacct|admin)-[A-Za-z0-9_-]{20,}"  # OpenAI project / service keys
        r"|\bsk-[A-Za-z0-9]{48}\b"  # OpenAI legacy keys
        r"|\bgh[pousr]_[A-Za-z0-9]{36,255}\b"  # GitHub: personal, OAuth, user, server, refresh tokens
        r"|\bgithub_pat_[A-Za-z0-9_]{22,255}\b"  # GitHub fine-grained personal tokens
        r"|\bglpat-[A-Za-z0-9_-]{20,}"  # GitLab personal tokens
        r"|\bxox[abposre]-[A-Za-z0-9-]{10,}"  # Slack
        r"|\b(?:AKIA|ASIA)[A-Z0-9]{16}\b"  # AWS access key ids
        r"|\bAIza[0-9A-Za-z_-]{35}"  # Google API keys
        r"|\b(?:sk|rk)_(?:live|test)_[0-9A-Za-z]{20,}"  # Stripe secret and restricted keys
        r"|\bnpm_[A-Za-z0-9]{36}\b"  # npm
        r"|\bpypi-AgE[A-Za-z0-9_-]{50,}"  # PyPI (a macaroon: pypi.org's and test.pypi.org's)
    )


@cache
def _named_secrets() -> re.Pattern[str]:
    """Secrets with no shape of their own, where their name says what they are: the name is kept."""
    return re.compile(
        r"(?i)(\baws_?secret_?access_?key\b[\"']?\s*[:=]\s*[\"']?|\bsecretaccesskey\b[\"']?\s*[:=]\s*[\"']?)"
        r"([A-Za-z0-9/+=]{40})"
    )


def usable_secrets(secrets: Iterable[str | None]) -> tuple[str, ...]:
    """The secrets worth replacing, longest first (a key that contains another is replaced whole)."""
    found = {s for s in secrets if s and len(s) >= MIN_SECRET_LENGTH}
    return tuple(sorted(found, key=len, reverse=True))


def redact(text: str, secrets: Sequence[str] = ()) -> str:
    """``text`` with each known secret (from ``usable_secrets``) and each recognisable credential
    replaced by ``[REDACTED]``. Never raises."""
    for secret in secrets:
        if secret in text:
            text = text.replace(secret, REDACTED)
    if any(marker in text for marker in _MARKERS):  # substring scans: far cheaper than the pattern
        text = _key_formats().sub(REDACTED, text)
    if _might_hold_header(text):
        text = _header().sub(_keep_header_name, text)
    if "ecret" in text or "ECRET" in text:
        text = _named_secrets().sub(lambda m: f"{m.group(1)}{REDACTED}", text)
    return text


def _might_hold_header(text: str) -> bool:
    lowered = text.lower()
    return "authorization" in lowered or "api-key" in lowered


def _keep_header_name(match: re.Match[str]) -> str:
    name = match.group(1) if match.group(1) is not None else match.group(3)
    return f"{name}{REDACTED}"


class Redactor:
    """A growing set of known secrets with ``redact`` bound to it. The command line creates one before it
    knows the settings (logging starts first) and adds the secrets once they are resolved."""

    def __init__(self, secrets: Iterable[str | None] = ()) -> None:
        self.secrets = usable_secrets(secrets)

    def add(self, secrets: Iterable[str | None]) -> None:
        self.secrets = usable_secrets((*self.secrets, *secrets))

    def __call__(self, text: str) -> str:
        return redact(text, self.secrets)


class RedactingFormatter(logging.Formatter):
    """Wraps a handler's formatter: the finished line (message, arguments and traceback alike) is
    redacted, so no formatter or exception text can bypass it."""

    def __init__(self, inner: logging.Formatter, redactor: Redactor) -> None:
        super().__init__()
        self.inner = inner
        self.redactor = redactor

    def format(self, record: logging.LogRecord) -> str:
        return self.redactor(self.inner.format(record))


def redact_handler(handler: logging.Handler, redactor: Redactor) -> None:
    """Make everything ``handler`` writes pass through ``redactor`` (idempotent). Frontends that add a
    log handler of their own (a log file) call this on it."""
    current = handler.formatter or logging.Formatter()
    if isinstance(current, RedactingFormatter):
        current.redactor = redactor
        return
    handler.setFormatter(RedactingFormatter(current, redactor))
