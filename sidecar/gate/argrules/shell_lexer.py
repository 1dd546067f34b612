"""Reading a shell command line into what it would run: lists of pipelines of simple commands.

Owns the POSIX-shell surface the classifier needs, and nothing more: words with quotes
removed (a quoted span is data, never an operator), the separators `;` `&&` `||` `&`
`|` `|&` and newlines, `( )` groups, redirections with their targets, here-documents
(their bodies kept, since `bash <<EOF` runs one), comments, and every substitution that
runs code, `$(...)`, backticks, `<(...)`/`>(...)`, even inside double quotes, read
again as a command line of its own. Parameter expansions (`$x`, `${x}`) stay as their
text and mark the word as computed. Refuses, with `Unreadable`, what it cannot read
with certainty: an unclosed quote or substitution, nesting deeper than `MAX_DEPTH`.
Pure: no I/O, no process, nothing is expanded or run.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

__all__ = ["MAX_COMMANDS", "MAX_DEPTH", "MAX_WORDS", "Pipeline", "Script", "Simple", "Unreadable", "Word", "read_script"]

MAX_DEPTH = 12  # substitutions inside substitutions read, at most
MAX_COMMANDS = 1000  # simple commands in one line, its substitutions included, at most
MAX_WORDS = 2000  # words in one simple command, at most

_PLAIN = re.compile(r"[^\s'\"\\$`;&|<>()]+")
_DOUBLE_PLAIN = re.compile(r"[^\\$`]+")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|[0-9@*#?$!-]")
_OUTPUT_OPS = (">>", ">|", ">&", "&>>", "&>", "<>", ">")
_INPUT_OPS = ("<<<", "<<-", "<<", "<&", "<")


class Unreadable(Exception):
    """The command line is not one this reader can take apart with certainty."""


@dataclass
class Word:
    text: str = ""  # quotes removed; expansions kept as written
    quoted: bool = False  # some part was quoted
    computed: bool = False  # holds an expansion or a substitution


@dataclass
class Simple:
    words: list[Word] = field(default_factory=list)
    redirects: list[tuple[str, Word]] = field(default_factory=list)  # (operator, target)
    substitutions: list[Script] = field(default_factory=list)  # what its words and redirects run
    heredocs: list[str] = field(default_factory=list)  # bodies fed to its input


@dataclass
class Pipeline:
    commands: list[Simple] = field(default_factory=list)


@dataclass
class Script:
    pipelines: list[Pipeline] = field(default_factory=list)

    def simples(self) -> list[Simple]:
        return [simple for pipeline in self.pipelines for simple in pipeline.commands]


def read_script(text: str, depth: int = 0, counted: list[int] | None = None) -> Script:
    """`counted`: the simple commands read so far, shared with the substitutions inside."""
    if depth > MAX_DEPTH:
        raise Unreadable(f"substitutions nest more than {MAX_DEPTH} deep")
    return _Reader(text, depth, counted if counted is not None else [0]).read()


def _closing(text: str, start: int, opener: str = "(", closer: str = ")") -> int:
    """The index of the `closer` that ends the group opened just before `start`, skipping
    quoted spans and escapes; Unreadable when there is none."""
    level, i, end = 1, start, len(text)
    while i < end:
        char = text[i]
        if char == "\\":
            i += 2
            continue
        if char == "'":
            i = _quote_end(text, i + 1, "'") + 1
            continue
        if char == '"':
            i = _double_end(text, i + 1) + 1
            continue
        if char == opener:
            level += 1
        elif char == closer:
            level -= 1
            if level == 0:
                return i
        i += 1
    raise Unreadable(f"a '{opener}' is never closed")


def _quote_end(text: str, start: int, quote: str) -> int:
    end = text.find(quote, start)
    if end < 0:
        raise Unreadable("a quote is never closed")
    return end


def _double_end(text: str, start: int) -> int:
    i = start
    while i < len(text):
        char = text[i]
        if char == "\\":
            i += 2
        elif char == '"':
            return i
        elif text.startswith("$(", i):
            i = _closing(text, i + 2) + 1
        elif char == "`":
            i = _backtick_end(text, i + 1) + 1
        else:
            i += 1
    raise Unreadable("a double quote is never closed")


def _backtick_end(text: str, start: int) -> int:
    i = start
    while i < len(text):
        if text[i] == "\\":
            i += 2
        elif text[i] == "`":
            return i
        else:
            i += 1
    raise Unreadable("a backtick is never closed")


class _Reader:
    """One pass over one command line; substitutions are read by readers of their own."""

    def __init__(self, text: str, depth: int, counted: list[int]) -> None:
        self.text, self.depth, self.i = text, depth, 0
        self.counted = counted
        self.script = Script()
        self.pipeline = Pipeline()
        self.simple = Simple()
        self.word: Word | None = None
        self.target_of: str | None = None  # the redirection the next word is the target of
        self.pending_heredocs: list[tuple[str, bool, bool]] = []  # (delimiter, strip tabs, quoted)

    def read(self) -> Script:
        text = self.text
        while self.i < len(text):
            plain = _PLAIN.match(text, self.i)
            if plain is not None:
                self.i = plain.end()
                self._append(plain.group())  # may skip a comment: after the run, never into it
                continue
            self._special(text[self.i])
        self._end_word()
        if self.target_of is not None:
            raise Unreadable(f"a '{self.target_of}' has no target")
        self._end_pipeline()
        return self.script

    # -- words -------------------------------------------------------------------------

    def _append(self, text: str, quoted: bool = False, computed: bool = False) -> None:
        if self.word is None:
            if text.startswith("#") and not quoted and not computed:  # a comment runs to the line's end
                newline = self.text.find("\n", self.i)
                self.i = len(self.text) if newline < 0 else newline
                self.word = None
                return
            self.word = Word()
        self.word.text += text
        self.word.quoted |= quoted
        self.word.computed |= computed

    def _end_word(self) -> None:
        word, self.word = self.word, None
        if word is None:
            return
        if self.target_of is not None:
            self.simple.redirects.append((self.target_of, word))
            if self.target_of in ("<<", "<<-"):
                self.pending_heredocs.append((word.text, self.target_of == "<<-", word.quoted))
            self.target_of = None
        else:
            self.simple.words.append(word)
            if len(self.simple.words) > MAX_WORDS:
                raise Unreadable(f"more than {MAX_WORDS:,} words in one command")

    # -- what is not a plain character ---------------------------------------------------

    def _special(self, char: str) -> None:
        handler = _HANDLERS.get(char)
        if handler is not None:
            handler(self)
        elif char in ";&|()\n":
            self._operator(char)
        else:  # other white space (vertical tab, form feed, unicode spaces) ends a word too
            self._blank()

    def _blank(self) -> None:
        self._end_word()
        self.i += 1

    def _single(self) -> None:
        end = _quote_end(self.text, self.i + 1, "'")
        self._append(self.text[self.i + 1:end], quoted=True)
        self.i = end + 1

    def _escape(self) -> None:
        following = self.text[self.i + 1:self.i + 2]
        if following == "\n" or not following:  # a line continuation (or a lone trailing backslash)
            self.i += 2
            return
        self._append(following, quoted=True)
        self.i += 2

    def _double(self) -> None:
        end = _double_end(self.text, self.i + 1)
        inner, i = self.text[self.i + 1:end], 0
        self._append("", quoted=True)
        while i < len(inner):
            if inner[i] == "\\" and i + 1 < len(inner):
                self._append(inner[i + 1] if inner[i + 1] in '$`"\\\n' else inner[i:i + 2], quoted=True)
                i += 2
            elif inner.startswith("$(", i) and not inner.startswith("$((", i):
                close = _closing(inner, i + 2)
                self._substitute(inner[i + 2:close], inner[i:close + 1])
                i = close + 1
            elif inner[i] == "`":
                close = _backtick_end(inner, i + 1)
                self._substitute(inner[i + 1:close], inner[i:close + 1])
                i = close + 1
            else:
                run = _DOUBLE_PLAIN.match(inner, i)
                if run is not None:
                    self._append(run.group(), quoted=True)
                    i = run.end()
                else:
                    self._append(inner[i], quoted=True, computed=inner[i] == "$")
                    i += 1
        self.i = end + 1

    def _dollar(self) -> None:
        text, i = self.text, self.i
        if text.startswith("$((", i):  # arithmetic: data, though computed (and what it substitutes runs)
            close = _closing(text, i + 2)
            self._substitutions_in(text[i + 3:close], self.simple)
            self._append(text[i:close + 1], computed=True)
            self.i = close + 1
        elif text.startswith("$(", i):
            close = _closing(text, i + 2)
            self._substitute(text[i + 2:close], text[i:close + 1])
            self.i = close + 1
        elif text.startswith("${", i):  # `${x:-$(cmd)}`: the default's substitution runs
            close = _closing(text, i + 2, "{", "}")
            self._substitutions_in(text[i + 2:close], self.simple)
            self._append(text[i:close + 1], computed=True)
            self.i = close + 1
        elif text.startswith("$'", i):  # ANSI-C quoting: kept as written (its escapes are not decoded)
            close = _quote_end(text, i + 2, "'")
            while text[close - 1] == "\\" and text[close - 2] != "\\":
                close = _quote_end(text, close + 1, "'")
            self._append(text[i + 2:close], quoted=True, computed=True)
            self.i = close + 1
        else:
            name = _NAME.match(text, i + 1)
            self._append(text[i:name.end()] if name else "$", computed=name is not None)
            self.i = name.end() if name else i + 1

    def _backtick(self) -> None:
        close = _backtick_end(self.text, self.i + 1)
        self._substitute(self.text[self.i + 1:close], self.text[self.i:close + 1])
        self.i = close + 1

    def _substitutions_in(self, text: str, simple: Simple) -> None:
        """Every `$(...)` and backtick span inside `text` (a here-document, a `${...}`),
        read as a command line of its own and counted as `simple`'s."""
        i = 0
        while True:
            dollar, tick = text.find("$(", i), text.find("`", i)
            if dollar < 0 and tick < 0:
                return
            if tick < 0 or 0 <= dollar < tick:
                close = _closing(text, dollar + 2)
                simple.substitutions.append(read_script(text[dollar + 2:close], self.depth + 1, self.counted))
            else:
                close = _backtick_end(text, tick + 1)
                simple.substitutions.append(read_script(text[tick + 1:close], self.depth + 1, self.counted))
            i = close + 1

    def _substitute(self, inner: str, written: str) -> None:
        """Code that runs: read as a command line of its own; the word keeps its text."""
        self.simple.substitutions.append(read_script(inner, self.depth + 1, self.counted))
        self._append(written, computed=True)

    # -- operators and redirections --------------------------------------------------------

    def _redirect(self) -> None:
        text, i = self.text, self.i
        if text.startswith(("<(", ">("), i):  # process substitution: code that runs
            close = _closing(text, i + 2)
            self._substitute(text[i + 2:close], text[i:close + 1])
            self.i = close + 1
            return
        if self.word is not None and self.word.text.isdigit() and not self.word.quoted:
            self.word = None  # `2>`: the number names the stream
        self._end_word()
        operator = next(op for op in (*_OUTPUT_OPS, *_INPUT_OPS) if text.startswith(op, i))
        if self.target_of is not None:
            raise Unreadable(f"a '{self.target_of}' has no target")
        self.target_of = operator
        self.i = i + len(operator)

    def _operator(self, char: str) -> None:
        text, i = self.text, self.i
        if char == "&" and text.startswith("&>", i):
            self._end_word()
            self.target_of = "&>>" if text.startswith("&>>", i) else "&>"
            self.i = i + len(self.target_of)
            return
        self._end_word()
        if self.target_of is not None:
            raise Unreadable(f"a '{self.target_of}' has no target")
        two = text[i:i + 2]
        if char == "|" and two not in ("||",):
            self._end_simple()
            self.i = i + (2 if two == "|&" else 1)
            return
        self._end_pipeline()
        self.i = i + (2 if two in ("&&", "||", ";;") else 1)
        if char == "\n":
            self._read_heredocs()

    def _read_heredocs(self) -> None:
        """After a newline, the bodies of the here-documents named on the line just ended."""
        for delimiter, strip, quoted in self.pending_heredocs:
            lines: list[str] = []
            while self.i < len(self.text):
                newline = self.text.find("\n", self.i)
                line = self.text[self.i:] if newline < 0 else self.text[self.i:newline]
                self.i = len(self.text) if newline < 0 else newline + 1
                if (line.lstrip("\t") if strip else line) == delimiter:
                    break
                lines.append(line)
            body = "\n".join(lines)
            self._last_simple().heredocs.append(body)
            if not quoted:  # an unquoted delimiter: the body's substitutions run
                self._substitutions_in(body, self._last_simple())
        self.pending_heredocs = []

    def _last_simple(self) -> Simple:
        if self.script.pipelines and self.script.pipelines[-1].commands:
            return self.script.pipelines[-1].commands[-1]
        return self.simple

    def _end_simple(self) -> None:
        if self.simple.words or self.simple.redirects or self.simple.substitutions:
            self.pipeline.commands.append(self.simple)
            self.counted[0] += 1
            if self.counted[0] > MAX_COMMANDS:
                raise Unreadable(f"more than {MAX_COMMANDS:,} commands in one line")
        self.simple = Simple()

    def _end_pipeline(self) -> None:
        self._end_simple()
        if self.pipeline.commands:
            self.script.pipelines.append(self.pipeline)
        self.pipeline = Pipeline()


_HANDLERS: dict[str, Callable[[_Reader], None]] = {
    " ": _Reader._blank, "\t": _Reader._blank, "\r": _Reader._blank, "'": _Reader._single, '"': _Reader._double,
    "\\": _Reader._escape, "$": _Reader._dollar, "`": _Reader._backtick, "<": _Reader._redirect,
    ">": _Reader._redirect,
}
