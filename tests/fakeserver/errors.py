"""Error answers in each protocol's own format, with the words the real services use."""

from __future__ import annotations

import json
from typing import Any

OPENAI_TYPES = {
    400: "invalid_request_error",
    401: "invalid_request_error",
    403: "permission_error",
    404: "invalid_request_error",
    429: "requests",
    500: "server_error",
    503: "server_error",
}
ANTHROPIC_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    504: "timeout_error",
    529: "overloaded_error",
}
DEFAULT_MESSAGES = {
    400: "Invalid request.",
    401: "Incorrect API key provided.",
    403: "You do not have access to this resource.",
    404: "Not found.",
    408: "Request timed out.",
    409: "Conflict.",
    429: "Rate limit reached for requests. Please try again later.",
    500: "The server had an error while processing your request.",
    502: "Bad gateway.",
    503: "The server is overloaded or not ready yet.",
    529: "Overloaded",
}
OPENAI_OVERFLOW = (
    "This model's maximum context length is 128000 tokens. However, your messages resulted in "
    "131072 tokens. Please reduce the length of the messages."
)
ANTHROPIC_OVERFLOW = "prompt is too long: 208310 tokens > 200000 maximum"


def default_message(status: int) -> str:
    return DEFAULT_MESSAGES.get(status, f"Fake server error {status}.")


def openai_error_body(
    status: int, message: str, error_type: str | None = None, code: str | None = None
) -> bytes:
    err: dict[str, Any] = {
        "message": message,
        "type": error_type or OPENAI_TYPES.get(status, "server_error"),
        "param": None,
        "code": code,
    }
    return json.dumps({"error": err}).encode()


def anthropic_error_body(status: int, message: str, error_type: str | None = None) -> bytes:
    kind = error_type or ANTHROPIC_TYPES.get(
        status, "api_error" if status >= 500 else "invalid_request_error"
    )
    return json.dumps(
        {"type": "error", "error": {"type": kind, "message": message}, "request_id": "req_fake"}
    ).encode()


def error_body(
    protocol: str, status: int, message: str, error_type: str | None = None, code: str | None = None
) -> bytes:
    if protocol == "anthropic":
        return anthropic_error_body(status, message, error_type)
    return openai_error_body(status, message, error_type, code)
