"""Mapping HTTP failures to the ``ProviderError`` tree, keeping the server's own words.

Both services put a message in the error body (OpenAI ``{"error": {"message", "type", "code"}}``,
Anthropic ``{"type": "error", "error": {"type", "message"}}``); OpenAI-compatible servers vary
(``{"error": "text"}``, ``{"detail": ...}``, plain text), so the extraction is forgiving and falls back
to the raw body. Context overflow is recognised by the codes and phrases the real services use.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Mapping
from functools import cache
from typing import Any

from ink.ai.errors import (
    AuthError,
    BadRequest,
    BadResponse,
    ConnectionFailed,
    ContextOverflow,
    Overloaded,
    ProviderError,
    RateLimited,
    ServerError,
    TlsFailed,
)
from ink.ai.http1 import (
    ConnectError,
    Headers,
    HttpError,
    InvalidRequest,
    MalformedResponse,
    Response,
    Timeout,
    TlsError,
    TrustStoreError,
)

_MAX_BODY_CHARS = 500


@cache
def _overflow() -> re.Pattern[str]:
    """Compiled on first use (~0.35 ms): only a failed request is read for it."""
    return re.compile(
        r"prompt is too long|maximum context length|context[_ ]length[_ ]exceeded"
        r"|exceeds the context window|context window exceeds|reduce the length of the messages"
        r"|input is too long|too many (input )?tokens|exceeds the available context size"
        r"|greater than the context length|exceeded model token limit|input token count.*exceeds",
        re.IGNORECASE,
    )


def is_context_overflow(message: str, code: str | None = None, kind: str | None = None) -> bool:
    if code == "context_length_exceeded" or kind == "context_length_exceeded":
        return True
    return bool(_overflow().search(message))


def parse_retry_after(headers: Headers) -> float | None:
    """Seconds to wait from ``retry-after-ms``, or ``retry-after`` as seconds or an HTTP date."""
    millis = headers.get("retry-after-ms")
    if millis is not None:
        try:
            return max(0.0, float(millis) / 1000)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    import email.utils  # ~4 ms, and a date here is rare: only now

    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def error_details(payload: Any) -> tuple[str | None, str | None, str | None]:
    """``(message, type, code)`` from an error body in any of the known shapes."""
    if not isinstance(payload, Mapping):
        return None, None, None
    err = payload.get("error")
    if isinstance(err, Mapping):
        message = err.get("message")
        return (
            str(message) if message is not None else None,
            _opt_str(err.get("type")),
            _opt_str(err.get("code")),
        )
    if isinstance(err, str):
        return err, None, None
    for key in ("message", "detail"):
        if isinstance(payload.get(key), str):
            return payload[key], _opt_str(payload.get("type")), None
    return None, None, None


def _opt_str(value: Any) -> str | None:
    return str(value) if value is not None else None


def error_from_response(response: Response, provider: str) -> ProviderError:
    """The error for a non-2xx answer whose body has been read (``Response.read``)."""
    text = response.text
    try:
        payload: Any = json.loads(text) if text else None
    except (ValueError, RecursionError):
        payload = None
    message, kind, code = error_details(payload)
    if message is None:
        message = text.strip()[:_MAX_BODY_CHARS] or response.reason or "no error message"
    return error_for_status(
        response.status,
        message,
        provider,
        kind=kind,
        code=code,
        retry_after=parse_retry_after(response.headers),
    )


def error_for_status(
    status: int | None,
    message: str,
    provider: str,
    *,
    kind: str | None = None,
    code: str | None = None,
    retry_after: float | None = None,
) -> ProviderError:
    """Pick the class from the status, the error type (Anthropic) and the code (OpenAI)."""
    if is_context_overflow(message, code, kind) or status == 413:
        return ContextOverflow(message, status=status, provider=provider)
    if kind == "overloaded_error" or status in (503, 529):
        return Overloaded(message, status=status, provider=provider)
    if kind == "rate_limit_error" or status == 429:
        return RateLimited(message, status=status, provider=provider, retry_after=retry_after)
    if kind in ("authentication_error", "permission_error") or status in (401, 403):
        return AuthError(message, status=status, provider=provider)
    if status is not None:
        cls = ServerError if status >= 500 else BadRequest
        return cls(message, status=status, provider=provider)
    # An error event inside a 200 stream has only its type to go by.
    if kind == "invalid_request_error":
        return BadRequest(message, provider=provider)
    return ServerError(message, provider=provider)


def error_from_transport(exc: HttpError, url: str, provider: str, *, streamed: bool) -> ProviderError:
    """A failure below HTTP: no connection, timeout, or a stream that broke off; or a request that cannot
    be sent as it is (a header value from the configuration, the proxy's kind): not retried."""
    detail = str(exc) or type(exc).__name__
    if isinstance(exc, InvalidRequest):
        return BadRequest(f"cannot send the request to {url}: {detail}; not retried", provider=provider)
    if isinstance(exc, MalformedResponse):
        return BadResponse(
            f"{url} answered in a form ink cannot read: {detail}; not retried", provider=provider
        )
    if isinstance(exc, TrustStoreError):
        return TlsFailed(f"{detail}; not retried", provider=provider)
    if isinstance(exc, TlsError):
        return TlsFailed(f"cannot connect to {url}: {detail}; not retried", provider=provider)
    if isinstance(exc, ConnectError):
        return ConnectionFailed(f"cannot connect to {url}: {detail}", provider=provider)
    if isinstance(exc, Timeout):
        return ConnectionFailed(f"timed out talking to {url}: {detail}", provider=provider)
    if streamed:
        return ConnectionFailed(f"the stream from {url} broke off: {detail}", provider=provider)
    return ConnectionFailed(f"connection to {url} failed: {detail}", provider=provider)
