"""``ink sessions``: the sessions of the working directory, newest first, one line each.

    ID        UPDATED           MSGS  FIRST PROMPT
    3f9a1c2e  2026-11-30 14:02    12  fix the failing parser test

Resume one with ``ink --resume ID`` (a unique prefix is enough) or the newest with ``ink --continue``.
"""

from __future__ import annotations

import sys
import time
from typing import TextIO

from ink.config import Invocation, Settings
from ink.store import SessionInfo, SessionStore

ID_WIDTH = 8
PROMPT_WIDTH = 60


def main(settings: Settings, invocation: Invocation, out: TextIO | None = None) -> int:
    out = out if out is not None else sys.stdout
    sessions = SessionStore(settings.session_dir).sessions(settings.cwd)
    if not sessions:
        print(f"no sessions in {settings.cwd} yet; `ink` starts one", file=out)
        return 0
    print(f"{'ID':<{ID_WIDTH}}  {'UPDATED':<16}  {'MSGS':>4}  FIRST PROMPT", file=out)
    for info in sessions:
        print(format_line(info), file=out)
    print("\nresume with: ink --resume ID   (or ink --continue for the newest)", file=out)
    return 0


def format_line(info: SessionInfo) -> str:
    updated = time.strftime("%Y-%m-%d %H:%M", time.localtime(info.updated))
    prompt = " ".join(info.first_prompt.split()) or "(no prompt yet)"
    if len(prompt) > PROMPT_WIDTH:
        prompt = prompt[: PROMPT_WIDTH - 1] + "…"
    return f"{info.id[:ID_WIDTH]:<{ID_WIDTH}}  {updated:<16}  {info.message_count:>4}  {prompt}"
