"""``ink.ai.redacting``: a provider wrapped with the secrets it was given reports failures without them:
the error's message (and the exceptions chained to it), and each retry notice."""

from __future__ import annotations

import pytest

from ink.ai.errors import AuthError
from ink.ai.redacting import RedactingProvider, redacting
from ink.ai.stream import RetryScheduled, StreamEvent
from ink.redaction import REDACTED
from tests.ai.helpers import make_request, provider_for
from tests.fakeserver import FakeModelServer, Fault

KEY = "sk-test-0123456789abcdef"


async def test_errors_and_retry_notices_carry_no_secret(fake_server: FakeModelServer, protocol: str) -> None:
    fake_server.script(
        Fault.http(500, message=f"upstream refused key {KEY}"),
        Fault.http(401, message=f"Incorrect API key provided: {KEY}"),
    )
    provider = redacting(provider_for(protocol, fake_server, api_key=KEY), [KEY])
    assert redacting(provider, [KEY]) is provider, "wrapped once"
    seen: list[StreamEvent] = []
    with pytest.raises(AuthError) as caught:
        async for event in provider.stream(make_request()):
            seen.append(event)
    await provider.aclose()
    (notice,) = [e for e in seen if isinstance(e, RetryScheduled)]
    assert KEY not in notice.error and REDACTED in notice.error
    error: BaseException | None = caught.value
    while error is not None:
        assert KEY not in str(error), error
        error = error.__cause__ or error.__context__
    assert REDACTED in str(caught.value) and isinstance(provider, RedactingProvider)
