"""Real-model tests: the starter model (SmolLM2-135M-Instruct) served by ``ink --provider local``.

``scripts/test`` installs the ``local`` extra and fetches the model once into a cache
(``INK_TEST_MODELS``); each test gets an ``INK_HOME`` whose ``models/`` holds a link to it, so ink uses it
without fetching. Without the runtime or the model the tests are skipped, unless
``INK_REQUIRE_REAL_MODEL=1`` (set by scripts/test) makes that a failure.
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import pytest

from ink.local.starter import FILE_NAME
from tests.cli.inkproc import ink_env


def _cached_model() -> Path | None:
    folder = os.environ.get("INK_TEST_MODELS", "")
    path = Path(folder) / FILE_NAME if folder else None
    return path if path is not None and path.is_file() else None


@pytest.fixture
def local_env(tmp_path: Path) -> dict[str, str]:
    """ink's environment with the starter model in place, temperature 0 and short replies."""
    model = _cached_model()
    if model is None or importlib.util.find_spec("xllamacpp") is None:
        why = "the local runtime (pip install '.[local]') and INK_TEST_MODELS (scripts/test) are needed"
        if os.environ.get("INK_REQUIRE_REAL_MODEL") == "1":
            pytest.fail(why)
        pytest.skip(why)
    home = tmp_path / "inkhome"
    (home / "models").mkdir(parents=True)
    (home / "models" / FILE_NAME).symlink_to(model)
    (home / "config.toml").write_text("max_tokens = 48\n")
    return ink_env(tmp_path, INK_LOCAL_TEMPERATURE="0")
