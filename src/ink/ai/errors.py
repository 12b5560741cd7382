"""Provider failures, one tree for every provider.

    ProviderError                 any failure of a model call; ``message`` is the server's own words
    ├── AuthError                 401/403: the key is missing, wrong or lacks access
    ├── RateLimited               429: ``retry_after`` seconds when the server said so
    ├── Overloaded                503/529 and Anthropic ``overloaded_error``
    ├── ServerError               other 5xx
    ├── ContextOverflow           the prompt does not fit the model's window
    ├── BadRequest                other 4xx: the request itself is wrong
    ├── ConnectionFailed          no connection, reset, connect timeout, or the stream broke off
    │   └── TlsFailed             the TLS handshake was refused (untrusted certificate, not TLS): not retried
    ├── Silent                    connected, then no answer within the first-byte or idle timeout
    ├── BadResponse               the server answered something that is not the protocol
    └── Refused                   the service stopped the reply itself (content filter, refusal)

Foreign exceptions (the HTTP client's, json) are mapped at the provider boundary with ``raise ... from exc``.
A message often quotes the server (its error body, reason phrase, error event): every control character
in it is escaped (``ink.ai.printable``), so no error line ink prints carries a terminal escape.
"""

from __future__ import annotations

from ink.ai.printable import printable


class ProviderError(Exception):
    retryable: bool = False

    def __init__(self, message: str, *, status: int | None = None, provider: str = "") -> None:
        message = printable(message)
        super().__init__(message)
        self.message = message
        self.status = status
        self.provider = provider

    def __str__(self) -> str:
        where = f"{self.provider} " if self.provider else ""
        code = f" (HTTP {self.status})" if self.status else ""
        return f"{where}{type(self).__name__}{code}: {self.message}"


class AuthError(ProviderError):
    pass


class RateLimited(ProviderError):
    retryable = True

    def __init__(
        self, message: str, *, status: int | None = 429, provider: str = "", retry_after: float | None = None
    ) -> None:
        super().__init__(message, status=status, provider=provider)
        self.retry_after = retry_after


class Overloaded(ProviderError):
    retryable = True


class ServerError(ProviderError):
    retryable = True


class ContextOverflow(ProviderError):
    pass


class BadRequest(ProviderError):
    pass


class ConnectionFailed(ProviderError):
    retryable = True


class TlsFailed(ConnectionFailed):
    """The server's TLS answer was refused: a certificate the client does not trust, or no TLS at all.
    Asking again gets the same answer, so it is not retried."""

    retryable = False


class Silent(ProviderError):
    """The server took the request and then said nothing (keep-alives count as nothing) for longer than a
    configured timeout. Not retried: a server that hung once is waited for again only if the user asks."""


class BadResponse(ProviderError):
    pass


class Refused(ProviderError):
    pass
