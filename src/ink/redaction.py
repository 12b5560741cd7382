"""Keeping secrets out of everything ink writes down: session files, logs, error messages, tracebacks.

Two kinds of secret are removed from text:

- **known secrets**: the values ink was given (the API key in use, every provider key in the environment
  and in the user config). They are replaced wherever they occur, whatever surrounds them.
- **recognisable secrets**: credentials in the shape of an HTTP header (``Authorization: Bearer ...``,
  ``x-api-key: ...``) and the unmistakable key formats of the supported services (``sk-ant-api03-...``,
  ``sk-proj-...``), so a key ink was never told about is still not copied into a log.

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
    """Key formats that cannot be mistaken for anything else."""
    return re.compile(
        r"\bsk-ant-[a-z]+\d*-[A-Za-z0-9_-]{20,}"  # Anthropic
        r"|\bsk-(?:proj|svcacct|admin)-[A-Za-z0-9_-]{20,}"  # OpenAI project / service keys
        r"|\bsk-[A-Za-z0-9]{48}\b"  # OpenAI legacy keys
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
    if "sk-" in text:
        text = _key_formats().sub(REDACTED, text)
    if _might_hold_header(text):
        text = _header().sub(_keep_header_name, text)
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
