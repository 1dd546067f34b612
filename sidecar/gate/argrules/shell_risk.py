"""The shell-command risk classifier: `safe`, `review` or `high` for one command line.

A tripwire, not a sandbox. It reads the line the way a shell would split it
(`shell_lexer`), rates every simple command, every pipeline and every substitution, and
answers the highest level found with a short reason built from its own words (never
from the command's text, which may hold a secret). `safe` is read-only inspection on a
known list; `high` is destruction, privilege, a download or decoded text run by a shell,
writes to system paths and the user's keys and start-up files, force pushes and
publishing; everything else, anything it cannot read, and any program whose name is
computed at run time is `review`. What it misses on purpose (code run by interpreters,
names built from variables, encodings a shell decodes later) is listed in the corpus
tests and the documentation.
"""

from __future__ import annotations

import itertools
import posixpath
import re
from collections.abc import Callable, Sequence

from sidecar.gate.argrules.rating import SAFE, Level, Rating, worst
from sidecar.gate.argrules.shell_git import rate_git
from sidecar.gate.argrules.shell_lexer import MAX_COMMANDS, MAX_WORDS, Pipeline, Script, Simple, Unreadable, Word, read_script
from sidecar.gate.argrules.shell_tables import (
    DECODERS, DOWNLOADERS, INTERPRETERS, KEYWORDS, PUBLISHERS, READ_ONLY, SHELLS, WIPERS, WRAPPER_VALUED, WRAPPERS,
    is_root_or_home, is_system_path,
)

__all__ = ["Level", "MAX_CHARS", "Rating", "rate_argv", "rate_command", "worst"]

MAX_CHARS = 64 * 1024  # a longer command line is not read: review
_FUNCTION_HEAD = re.compile(r"\(\s*\)\s*\{")
_QUOTED = re.compile(r"'[^']*'|\"(?:[^\"\\]|\\.)*\"")
_NAME_BEFORE = re.compile(r"([\w:.]{1,64})\s*$")
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(?:\[[^]]*\])?\+?=")
_RISKY_VARIABLES = ("PATH=", "LD_PRELOAD=", "LD_LIBRARY_PATH=", "BASH_ENV=", "ENV=", "PROMPT_COMMAND=", "IFS=",
                    "GIT_SSH_COMMAND=", "PAGER=", "GIT_PAGER=", "EDITOR=", "DYLD_INSERT_LIBRARIES=")
COMPUTED = "$computed"


def rate_command(text: str) -> Rating:
    if len(text) > MAX_CHARS:
        return Rating("review", f"the command is longer than {MAX_CHARS:,} characters and was not read")
    if "\0" in text:
        return Rating("review", "the command holds a NUL character")
    if _FUNCTION_HEAD.search(text) and _forks_itself(_QUOTED.sub(" ", text)):  # quoted spans are data
        return Rating("high", "a fork bomb")
    return _rate_text(text, 0)


def _forks_itself(text: str) -> bool:
    """A function whose body pipes it into itself in the background: `:(){ :|:& };:`."""
    for head in _FUNCTION_HEAD.finditer(text):
        name = _NAME_BEFORE.search(text, max(0, head.start() - 64), head.start())
        if name is None:
            continue
        body = text[head.end():head.end() + 1024].split("}", 1)[0]
        called = re.escape(name.group(1))
        if re.search(rf"{called}\s*\|\s*&?\s*{called}\s*&", body):
            return True
    return False


def rate_argv(argv: Sequence[str]) -> Rating:
    """A command given as a list of words (no shell reads it): its program and arguments."""
    if len(argv) > MAX_WORDS or sum(map(len, argv)) > MAX_CHARS:
        return Rating("review", "the command is too long to read")
    return _rate_words([Word(text=part) for part in argv], 0)


def _rate_text(text: str, depth: int) -> Rating:
    try:
        script = read_script(text, depth)
    except Unreadable as exc:
        # Unreadable never passes as safe; what can be read of it still counts.
        return worst(Rating("review", f"the command cannot be read with certainty ({exc})"), _salvage(text, depth))
    return _rate_script(script, depth)


def _salvage(text: str, depth: int) -> Rating:
    """The words of an unreadable line, split crudely on separators with quotes dropped."""
    pieces = re.split(r"[;&|\n()`]+|\$\(", text.replace("'", " ").replace('"', " "))
    return worst(*(_rate_words([Word(text=w) for w in piece.split()[:MAX_WORDS]], depth)
                   for piece in pieces[:MAX_COMMANDS]))


def _rate_script(script: Script, depth: int) -> Rating:
    return worst(*(_rate_pipeline(pipeline, depth) for pipeline in script.pipelines))


def _rate_pipeline(pipeline: Pipeline, depth: int) -> Rating:
    programs = [_program(simple.words) for simple in pipeline.commands]
    ratings = [_rate_simple(simple, program, depth) for simple, program in zip(pipeline.commands, programs)]
    downloaded = decoded = False  # some earlier stage fetched or decoded what flows on
    for stage, (name, args) in enumerate(programs):
        if stage and name in INTERPRETERS and not any(a.text == "-c" for a in args):
            if downloaded:
                ratings.append(Rating("high", "a download piped into a shell or interpreter"))
            elif decoded:
                ratings.append(Rating("high", "decoded text piped into a shell or interpreter"))
            else:
                ratings.append(Rating("review", "text piped into a shell or interpreter"))
        downloaded |= name in DOWNLOADERS
        decoded |= _decodes(name, args)
    return worst(*ratings)


def _decodes(name: str, args: list[Word]) -> bool:
    flags = DECODERS.get(name)
    return flags is not None and ("" in flags or any(a.text in flags for a in args))


def _runs_download(script: Script) -> bool:
    return any(_program(simple.words)[0] in DOWNLOADERS or any(_runs_download(s) for s in simple.substitutions)
               for simple in script.simples())


def _rate_simple(simple: Simple, program: tuple[str, list[Word]], depth: int) -> Rating:
    name = program[0]
    ratings = [_rate_script(sub, depth + 1) for sub in simple.substitutions]
    ratings += [_rate_redirect(op, target) for op, target in simple.redirects]
    if name in INTERPRETERS and any(_runs_download(sub) for sub in simple.substitutions):
        ratings.append(Rating("high", "a shell or interpreter runs a download"))
    for body in simple.heredocs:
        ratings.append(_rate_text(body, depth + 1) if name in SHELLS else
                       Rating("review", "a here-document fed to an interpreter") if name in INTERPRETERS else SAFE)
    return worst(_rate_words(simple.words, depth, program), *ratings)


def _rate_redirect(operator: str, target: Word) -> Rating:
    if operator.startswith("<") and operator != "<>":
        return SAFE
    text = target.text
    if operator in (">&", "<&") and (text.isdigit() or text == "-"):
        return SAFE  # one stream joined to another
    if is_system_path(text):
        return Rating("high", "a write to a system path or to the home folder's keys or start-up files")
    if posixpath.normpath(text) in ("/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty"):
        return SAFE
    return Rating("review", "writes a file")


# -- one simple command ---------------------------------------------------------------------


def _program(words: Sequence[Word]) -> tuple[str, list[Word]]:
    """The program a command runs (its base name, after assignments and wrappers such as
    `env`, `nice`, `xargs`, `timeout`) and its arguments; '' when nothing runs, and
    `COMPUTED` when its name is only known when the command runs."""
    i = 0
    while i < len(words) and _ASSIGNMENT.match(words[i].text) and not words[i].quoted:
        i += 1
    while i < len(words):
        word = words[i]
        if word.computed:
            return COMPUTED, list(words[i + 1:])
        name = posixpath.basename(word.text)
        if name not in WRAPPERS:
            return name, list(words[i + 1:])
        i = _skip_wrapper(words, i + 1, WRAPPERS[name], name == "env")
    return "", []


def _skip_wrapper(words: Sequence[Word], i: int, positional: int, assignments: bool) -> int:
    while i < len(words):
        text = words[i].text
        if text.startswith("-") and text != "-":
            i += 2 if text in WRAPPER_VALUED else 1
        elif assignments and _ASSIGNMENT.match(text):
            i += 1
        elif positional > 0:
            positional, i = positional - 1, i + 1
        else:
            break
    return i


def _rate_words(words: Sequence[Word], depth: int, program: tuple[str, list[Word]] | None = None) -> Rating:
    name, args = program if program is not None else _program(words)
    leading = itertools.takewhile(lambda w: not w.quoted and _ASSIGNMENT.match(w.text) is not None, words)
    risky = any(w.text.startswith(_RISKY_VARIABLES) for w in leading)
    base = Rating("review", "sets a variable that changes what runs") if risky else SAFE
    if not name:
        return base
    if name == COMPUTED:
        return worst(base, Rating("review", "the program's name is computed when the command runs"))
    return worst(base, _rate_program(name, [a.text for a in args], depth))


def _rate_program(name: str, args: list[str], depth: int) -> Rating:
    if name in WIPERS or name.startswith(("mkfs.", "mkfs_", "mke2fs")):
        return Rating("high", WIPERS.get(name, "mkfs (makes a file system)"))
    if name in KEYWORDS:
        return SAFE
    sub = next((a for a in args if not a.startswith("-")), "")
    if (name, sub) in PUBLISHERS:
        return Rating("high", f"{name} {sub} (publishing)")
    handler = _HANDLERS.get(name)
    if handler is not None:
        return handler(args, depth)
    if name in READ_ONLY:
        return SAFE
    return Rating("review", "not a known read-only command")


def _targets(args: list[str]) -> list[str]:
    """The operands: arguments that are not options (all of them after `--`)."""
    if "--" in args:
        cut = args.index("--")
        return [a for a in args[:cut] if not a.startswith("-")] + args[cut + 1:]
    return [a for a in args if not a.startswith("-") or a == "-"]


def _short_flags(args: list[str]) -> str:
    return "".join(a[1:] for a in args if a.startswith("-") and not a.startswith("--"))


# -- the programs that need a closer look -------------------------------------------------------


def _rm(args: list[str], depth: int) -> Rating:
    targets, flags = _targets(args), _short_flags(args)
    if any(is_root_or_home(t) or is_system_path(t) for t in targets):
        return Rating("high", "rm of /, the home folder or a system path")
    recursive = "r" in flags or "R" in flags or "--recursive" in args
    if recursive and ("f" in flags or "--force" in args):
        return Rating("high", "rm -rf (a forced recursive delete)")
    return Rating("review", "rm (deletes files)")


def _change_owner_or_mode(args: list[str], depth: int) -> Rating:
    if any(is_system_path(t) or is_root_or_home(t) for t in _targets(args)):
        return Rating("high", "a mode or owner change on a system path")
    return Rating("review", "changes a file's mode or owner")


def _kill(args: list[str], depth: int) -> Rating:
    pids = args[1:] if args and args[0].startswith("-") else args
    if any(p in ("1", "-1") for p in pids):
        return Rating("high", "kill of init or of every process")
    return Rating("review", "kill (ends processes)")


def _moves(args: list[str], depth: int) -> Rating:
    """mv, touch, truncate, unlink: every operand is changed."""
    return _writes_into(_targets(args), args)


def _copies(args: list[str], depth: int) -> Rating:
    """cp, ln, install, rsync: only the destination (the last operand, or `-t`'s) changes."""
    return _writes_into(_targets(args)[-1:], args)


def _writes_into(targets: list[str], args: list[str]) -> Rating:
    if "-t" in args and args.index("-t") + 1 < len(args):
        targets.append(args[args.index("-t") + 1])
    if any(is_system_path(t) for t in targets):
        return Rating("high", "a write to a system path or to the home folder's keys or start-up files")
    if any(is_root_or_home(t) for t in targets):
        return Rating("high", "moves or overwrites / or the home folder")
    return Rating("review", "writes or moves files")


def _tee(args: list[str], depth: int) -> Rating:
    targets = _targets(args)
    if all(posixpath.normpath(t) in ("/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty") for t in targets):
        return SAFE
    return _writes_into(targets, args)


def _find(args: list[str], depth: int) -> Rating:
    ratings: list[Rating] = []
    roots = [a for a in args[: next((i for i, a in enumerate(args) if a.startswith(("-", "(", "!"))), len(args))]]
    if "-delete" in args:
        system = any(is_system_path(r) or r.rstrip("/") in ("", "~", "$HOME") for r in roots)
        ratings.append(Rating("high", "find -delete over / or a system path") if system
                       else Rating("review", "find -delete (deletes files)"))
    for i, arg in enumerate(args):
        if arg in ("-exec", "-execdir", "-ok", "-okdir"):
            end = next((j for j in range(i + 1, len(args)) if args[j] in (";", "+")), len(args))
            ratings.append(_rate_words([Word(text=a) for a in args[i + 1:end]], depth))
        elif arg.startswith(("-fprint", "-fls")):
            ratings.append(Rating("review", "find writes a file"))
    return worst(*ratings)


def _sed(args: list[str], depth: int) -> Rating:
    if any(a.startswith("--in-place") for a in args) or "i" in _short_flags([a for a in args if len(a) < 6]):
        return Rating("review", "sed -i (edits files in place)")
    return SAFE


def _sort(args: list[str], depth: int) -> Rating:
    writes = any(a == "-o" or a.startswith(("--output", "-o")) for a in args)
    return Rating("review", "sort -o (writes a file)") if writes else SAFE


def _shell(args: list[str], depth: int) -> Rating:
    if "-c" in args and args.index("-c") + 1 < len(args):
        return _rate_text(args[args.index("-c") + 1], depth + 1)
    if not _targets(args):
        return Rating("review", "a shell reading its commands from its input")
    return Rating("review", "a shell running a script")


def _eval(args: list[str], depth: int) -> Rating:
    return worst(Rating("review", "eval (runs text as commands)"), _rate_text(" ".join(args), depth + 1))


def _python(args: list[str], depth: int) -> Rating:
    if "-m" in args and args.index("-m") + 2 < len(args):
        module, sub = args[args.index("-m") + 1], args[args.index("-m") + 2]
        if (module, sub) in PUBLISHERS:
            return Rating("high", f"{module} {sub} (publishing)")
    return Rating("review", "an interpreter runs code")


def _netcat(args: list[str], depth: int) -> Rating:
    if any(a in ("-e", "-c", "--exec", "--sh-exec", "--lua-exec") for a in args):
        return Rating("high", "a shell served over the network")
    return Rating("review", "netcat (raw network connections)")


def _systemctl(args: list[str], depth: int) -> Rating:
    if set(args) & {"poweroff", "reboot", "halt", "kexec", "emergency", "rescue", "suspend", "hibernate"}:
        return Rating("high", "systemctl ends or suspends the machine")
    if args and set(_targets(args)[:1]) <= {"status", "list-units", "list-unit-files", "is-active", "show", "cat"}:
        return SAFE
    return Rating("review", "systemctl changes services")


def _init(args: list[str], depth: int) -> Rating:
    if set(args) & {"0", "6", "S", "s", "1"}:
        return Rating("high", "init changes the run level (halts or reboots)")
    return Rating("review", "init")


def _destroyer(args: list[str], depth: int) -> Rating:
    if "destroy" in args or "-destroy" in args:
        return Rating("high", "destroys managed infrastructure")
    return Rating("review", "changes managed infrastructure")


def _crontab(args: list[str], depth: int) -> Rating:
    if "-r" in args:
        return Rating("high", "crontab -r (removes every scheduled job)")
    return SAFE if args == ["-l"] else Rating("review", "changes scheduled jobs")


def _git(args: list[str], depth: int) -> Rating:
    return rate_git(args)


Handler = Callable[[list[str], int], Rating]
_HANDLERS: dict[str, Handler] = {
    "rm": _rm, "chmod": _change_owner_or_mode, "chown": _change_owner_or_mode, "chgrp": _change_owner_or_mode,
    "chattr": _change_owner_or_mode, "setfacl": _change_owner_or_mode, "kill": _kill,
    "cp": _copies, "mv": _moves, "ln": _copies, "install": _copies, "rsync": _copies,
    "touch": _moves, "mkdir": _moves, "truncate": _moves, "unlink": _moves, "rmdir": _moves,
    "tee": _tee, "find": _find, "sed": _sed, "sort": _sort, "eval": _eval, "nc": _netcat, "ncat": _netcat,
    "netcat": _netcat, "systemctl": _systemctl, "init": _init, "telinit": _init, "terraform": _destroyer,
    "tofu": _destroyer, "pulumi": _destroyer, "crontab": _crontab, "git": _git,
    **{shell: _shell for shell in SHELLS},
    **{python: _python for python in ("python", "python2", "python3")},
}
