"""Reading JSON so that every value read can be written back as it came.

Python reads ``1e400`` as infinity and ``NaN`` as not-a-number, neither of which JSON can express: an id
read that way would be echoed as ``null``. ``load_json`` refuses such a line instead, with
an error that names the number, so a client never gets an answer it cannot match to its request.
"""

from __future__ import annotations

import json
import math
from typing import Any

_SHOWN = 40  # characters of an offending number quoted in the error


def load_json(text: str | bytes) -> Any:
    """``json.loads`` that raises ``ValueError`` for NaN/Infinity literals and for numbers out of the
    range of a float (``1e400``, and ``1e-400``, which would read as 0), instead of reading them as
    values JSON cannot write back."""
    return json.loads(text, parse_constant=_no_constant, parse_float=_finite)


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON value")


def _finite(text: str) -> float:
    value = float(text)
    mantissa = text.lower().split("e", 1)[0]
    if not math.isfinite(value) or (value == 0.0 and any(d in mantissa for d in "123456789")):
        raise ValueError(f"the number {text[:_SHOWN]} is out of range (use a string or an integer)")
    return value
