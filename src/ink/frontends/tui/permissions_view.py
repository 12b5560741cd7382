"""``/permissions``: the rules in force, numbered, each with where it is stored; ``/permissions remove
N`` stops applying an allow rule.

Where a rule lives: a flag (``--allow``/``--deny``), the user's config, the project's config (or its
``.claude/settings.json``), the project's remembered answers (``$INK_HOME/projects/.../permissions.
toml``, docs/permissions.md) or this session only (an "always" that could not be saved). Removing a
remembered rule takes it out of its file too; removing one from a flag or a config file stops it for
this session and says where to delete it for good. A deny rule is not removed here: a "no" holds
until the file or flag that said it changes (R37-R42).
"""

from __future__ import annotations

from typing import Any

from ink.app import App
from ink.frontends.tui.blocks import Block, sanitize

SESSION_ONLY = "an 'always' answer"  # the ``where`` of a rule remembered for this process only


def permissions_command(core: App, args: str) -> Block:
    policy = getattr(core.permission, "policy", None)
    rules = getattr(policy, "rules", None)
    if policy is None or rules is None:
        return Block("info", "the permission rules are not ink's own here (a replaced permission step)")
    words = args.split()
    if words[:1] == ["remove"]:
        return _remove(core, rules, words[1:])
    if words:
        return Block("error", "usage: /permissions, or /permissions remove N (N from the list)")
    return Block("listing", _listing(core, policy.mode, rules))


def _numbered(rules: Any) -> list[Any]:
    return [*rules.deny, *rules.allow]


def _listing(core: App, mode: str, rules: Any) -> str:
    lines = [f"Permission mode: {mode} (shift+tab switches it). Rules, deny first (a deny always wins):"]
    numbered = _numbered(rules)
    for number, rule in enumerate(numbered, 1):
        text = rule.text
        lines.append(f"{number}. {text.effect} {sanitize(text.text)}\t{where(core, text.where)}")
    if not numbered:
        lines.append("no rules: the mode decides (reads run, changes and commands ask in ask mode)")
    lines += ["", "remove an allow rule with /permissions remove N; rules: docs/permissions.md"]
    return "\n".join(lines)


def where(core: App, stored: str) -> str:
    """Where a rule with this ``where`` is stored, in words."""
    settings = core.settings
    memory = getattr(core.permission, "memory", None)
    if stored in ("--allow", "--deny"):
        return f"flag {stored} (this run's command line)"
    if stored == SESSION_ONLY:
        return "answered 'always' in this session" + (f" · {memory.path}" if memory is not None else "")
    if memory is not None and stored == str(memory.path):
        return f"remembered answer · {stored}"
    if stored.startswith(str(settings.ink_home / "config.toml")):
        return f"user config · {stored}"
    return f"project config · {sanitize(stored)}"


def _remove(core: App, rules: Any, words: list[str]) -> Block:
    numbered = _numbered(rules)
    if len(words) != 1 or not words[0].isdecimal() or not 1 <= int(words[0]) <= len(numbered):
        return Block("error", f"usage: /permissions remove N, N from 1 to {len(numbered)} (/permissions)")
    rule = numbered[int(words[0]) - 1]
    text = rule.text
    if text.effect == "deny":
        return Block(
            "error",
            f"deny {text.text} stays: a deny rule is removed where it was written "
            f"({where(core, text.where)})",
        )
    memory = getattr(core.permission, "memory", None)
    if memory is not None and text.where in (str(memory.path), SESSION_ONLY):
        try:  # an "always" of this session was saved there too, unless it could not be
            found = memory.remove(text.text)
        except OSError as exc:
            return Block("error", f"could not remove allow {text.text} from {memory.path}: {exc}")
        rules.forget(rule)
        gone = f"removed from {memory.path}" if found else "removed (it held for this session only)"
        return Block("info", f"allow {text.text}: {gone}; ink asks again")
    rules.forget(rule)
    return Block(
        "info",
        f"allow {text.text}: not applied for the rest of this session; it is still in "
        f"{where(core, text.where)}, and applies again next time unless removed there",
    )
