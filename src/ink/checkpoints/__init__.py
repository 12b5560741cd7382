"""Checkpoints of the workspace, so a rewind can undo what runs did to the files, bash included.

    shadow.py     a git object store of ink's own, outside the workspace: snapshot, compare, restore
    git.py        its git commands, sealed off from the user's git settings and the repository's attributes
    fifos.py      a git of the store waiting on a FIFO of the workspace: seen through /proc and let past
    restore.py    a restore's plan and its writes (byte-exact, journaled against a kill)
    writeback.py  files written and removed through folder descriptors: never a symlink followed
    pins.py       what a run left in the files it changed, fixed before its run_end
    keeper.py     which checkpoint belongs to which input, and the end of each run

docs/design/checkpoints.md describes what is kept, the limits, and what a restore does.
"""

from ink.checkpoints.shadow import RestoreReport, ShadowError, ShadowRepo, shadow_repo_for

SWITCH_ENV = "INK_CHECKPOINTS"
"""``off`` in the environment of ``ink -p``: no checkpoints even for a saved session. ``ink batch`` sets
it for every task it runs (many workspaces, none of them ever rewound)."""

__all__ = ["SWITCH_ENV", "RestoreReport", "ShadowError", "ShadowRepo", "shadow_repo_for"]
