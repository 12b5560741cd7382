"""Modules imported on first use, so start-up pays only for what the chosen mode touches (STYLE rule 8).

``lazy_module(name)`` is the standard library's ``importlib.util.LazyLoader`` recipe: it returns the
module object at once and runs its code the first time an attribute is read.
"""

from __future__ import annotations

import importlib.util
import sys
from types import ModuleType


def lazy_module(name: str) -> ModuleType:
    """``name``, loaded on first attribute access. Raises ``ModuleNotFoundError`` now if it is missing."""
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.find_spec(name)
    if spec is None or spec.loader is None:
        raise ModuleNotFoundError(f"No module named {name!r}", name=name)
    loader = importlib.util.LazyLoader(spec.loader)
    spec.loader = loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    loader.exec_module(module)
    return module
