"""git, rated: which sub-commands only read, and which push by force.

Global options come first (`-C dir`, `--git-dir=...`); `-c name=value` makes any command
`review`, since a configured pager, editor or ssh command runs what it names. A push
with `--force`, `--force-with-lease`, `--mirror`, a short flag holding `f` or a `+`
refspec is `high`; other pushes and every command that writes are `review`.
"""

from __future__ import annotations

from sidecar.gate.argrules.rating import SAFE, Rating

__all__ = ["rate_git"]

_GLOBAL_VALUED = frozenset({"-C", "--git-dir", "--work-tree", "--namespace", "--super-prefix", "--config-env"})
_READ_ONLY = frozenset({
    "status", "log", "diff", "show", "blame", "annotate", "grep", "ls-files", "ls-tree", "ls-remote", "rev-parse",
    "rev-list", "describe", "shortlog", "cat-file", "whatchanged", "help", "version", "count-objects", "name-rev",
    "merge-base", "show-ref", "for-each-ref", "check-ignore", "var", "show-branch", "cherry", "range-diff",
    "--version", "--help",
})
_LISTING = {
    "branch": frozenset({"-a", "-r", "-v", "-vv", "-l", "--list", "--all", "--remotes", "--show-current",
                         "--merged", "--no-merged", "--contains"}),
    "tag": frozenset({"-l", "--list", "-n", "--contains", "--points-at"}),
    "remote": frozenset({"-v", "--verbose", "show", "get-url"}),
    "stash": frozenset({"list", "show"}),
    "reflog": frozenset({"show"}),
    "config": frozenset({"--get", "--get-all", "--list", "-l", "--get-regexp", "--show-origin", "--global",
                         "--local", "--system"}),
    "worktree": frozenset({"list"}),
    "submodule": frozenset({"status", "summary"}),
}
_FORCE = ("--force", "--force-with-lease", "--force-if-includes", "--mirror")
_WRITES_FILES = ("--output", "-O", "--open-files-in-pager", "--ext-diff", "--textconv")


def rate_git(args: list[str]) -> Rating:
    i, configured = 0, False
    while i < len(args) and args[i].startswith("-"):
        configured |= args[i] == "-c" or args[i].startswith("--config-env")
        i += 2 if args[i] in _GLOBAL_VALUED or args[i] == "-c" else 1
    sub, rest = (args[i], args[i + 1:]) if i < len(args) else ("", [])
    if sub == "push":
        if _forces(rest):
            return Rating("high", "git push --force (rewrites the remote's history)")
        return Rating("review", "git push")
    if configured:
        return Rating("review", "git -c (a configured program may run)")
    if any(a.startswith(_WRITES_FILES) for a in rest):
        return Rating("review", "git writes a file or runs a configured program")
    if sub in _READ_ONLY or not sub:
        return SAFE
    if sub in _LISTING and _only_lists(sub, rest):
        return SAFE
    return Rating("review", f"git {sub}" if sub.replace("-", "").isalpha() else "git")


def _only_lists(sub: str, rest: list[str]) -> bool:
    """`git branch`, `git tag -l`, `git remote -v`, `git config --get x`: the listing forms."""
    listing = _LISTING[sub]
    options = [a for a in rest if a.startswith("-")]
    operands = [a for a in rest if not a.startswith("-")]
    if sub == "config":
        return any(a.startswith(("--get", "--list")) or a == "-l" for a in options)
    if not all(a in listing for a in options):
        return False
    if sub in ("branch", "tag"):
        return not operands
    return not operands or operands[0] in listing


def _forces(rest: list[str]) -> bool:
    for arg in rest:
        if arg.startswith(_FORCE):
            return True
        if arg.startswith("-") and not arg.startswith("--") and "f" in arg:
            return True
        if not arg.startswith("-") and arg.startswith("+"):
            return True
    return False
