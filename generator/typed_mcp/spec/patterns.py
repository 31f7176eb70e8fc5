"""Schema patterns every engine that reads them agrees on, checked in linear time: JSON Schema means
ECMA-262 regexes, which strict clients compile with the `u` flag (AJV), the MCP Python SDK's client
with Python's `re`, and the generated server with pydantic-core's Rust `regex` (its models, and the
argument check of `_runtime/arguments.py`), an engine whose time grows with the text's length times
the pattern's size, never exponentially. Real specs write patterns one engine refuses or reads
otherwise, and one refused pattern ends a whole listing or the server's start. So each pattern is
written in the common form of what it means, or dropped (with a note) when it has none: a dropped
pattern makes the published schema more open, never stricter than the server.

Dropped, because no linear-time engine reads them or because engines disagree: lookarounds (the
ASCII form of `\\b` and `\\B` is one), backreferences, flag groups, and patterns the Rust engine
refuses or that are past MAX_SIZE once their repetitions are written out."""

from __future__ import annotations

import functools
import re
import warnings

from pydantic_core import SchemaError, SchemaValidator, core_schema

_SYNTAX = set("^$\\.*+?()[]{}|/")  # what ECMA-262's `u` mode lets a backslash escape as itself
_LETTER_ESCAPES = set("dDwWsSnrtfvcxupP")  # letter escapes ECMA-262 gives a meaning (`\b`: see below)
_SURROGATE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")  # half a UTF-16 pair: no character in Rust
_OCTAL = re.compile(r"0[0-7]{0,2}|[0-3][0-7]{2}")
_NAMED_GROUP = re.compile(r"\(\?<(?![=!])[A-Za-z_][A-Za-z0-9_]*>")
# ECMA-262's `\d`, `\w` and `\s` are fixed sets (also in `u` mode); Python's `re` and Rust read them
# as Unicode properties (`\s`: U+FEFF is space only in ECMA-262, U+0085 only in the other two).
_CLASSES = {
    "d": "0-9",
    "w": "A-Za-z0-9_",
    "s": "\\t\\n\\x0B\\f\\r \\xA0\\u1680\\u2000-\\u200A\\u2028\\u2029\\u202F\\u205F\\u3000\\uFEFF",
}
# ECMA-262's `.` is any character but a line terminator; Python's `re` and Rust's take `\r`, U+2028, U+2029.
_DOT = "[^\\n\\r\\u2028\\u2029]"
# Patterns longer than this once their repetitions are written out are dropped: a linear engine's
# time per character grows with that size. At the limit, a pattern built to defeat the Rust engine's
# DFA (`a[ab]{252}!`, remembering which of the last 252 characters were `a`) costs it 3.5
# microseconds per character: 3.6 s for a 1 MiB argument, off the event loop (at 1,000, 31 us: 33 s).
# The largest pattern of the shared corpus is 129.
MAX_SIZE = 256
_MAX_GROUPS = 32  # nesting; beyond it a pattern is dropped rather than parsed recursively
_BRACES = re.compile(r"\{([0-9]+)(,([0-9]*))?\}")


class _Dropped(ValueError):
    """A pattern without a common linear-time form; the message says why."""


def linear_size(pattern: str) -> int:
    """The size of `pattern`, written as the Rust engine reads it, with its repetitions written out
    (compare with MAX_SIZE); a ValueError naming what ECMA-262's `u` mode cannot read in it."""
    return _Size(pattern).total()


def portable_pattern(pattern: str) -> str | None:
    """`pattern` as every engine reads it alike (see `read_pattern`), or None."""
    return read_pattern(pattern)[0]


@functools.lru_cache(maxsize=4096)
def read_pattern(pattern: str) -> tuple[str | None, str]:
    """(`pattern` as every engine reads it alike, "") or (None, why it is dropped).

    - A named group, `(?<id>...)`, which Python's `re` cannot read, matches as a plain group does.
    - An escaped character that needs none (`\\:`, `\\@`) is refused by the `u` mode: written plain.
    - A legacy octal escape (`\\000`, `\\037` in a class) is written as the `\\xHH` it means.
    - A `[` inside a character class is a literal in ECMA-262 and in `re`, a nested class in Rust: escaped.
    - `\\d`, `\\w`, `\\s` (and `\\D`, `\\W`, `\\S`) are fixed classes in ECMA-262 and Unicode ones in
      `re` and Rust (a server would pass `café` for `^\\w+$` that a strict client refuses): written as
      the classes they are; a negated one inside a class has no such form, and drops the pattern. So
      is `.`, which in ECMA-262 takes no `\\r`, U+2028 or U+2029.
    - The word boundaries `\\b` and `\\B` are ASCII in ECMA-262 and Unicode in `re` and Rust; their
      ASCII form is a lookaround, which no linear-time engine reads: dropped. `[\\b]` is a backspace.
    - A letter escape that ECMA-262 does not define (`\\Z`, `\\A`) means something else in each engine,
      and a UTF-16 surrogate (`\\uD800`) is a code unit in ECMA-262 and no character at all in Rust;
      a backreference, a lookaround or a flag group has no linear-time check; a lone `{`, `}` or `]`
      is a syntax error in the `u` mode: such a pattern is dropped, as is one past MAX_SIZE, one
      Python's `re` cannot compile and one pydantic-core's Rust engine refuses."""
    try:
        rewritten = _rewritten(_NAMED_GROUP.sub("(?:", pattern))
        size = _Size(rewritten).total()
    except _Dropped as exc:
        return None, str(exc)
    if size > MAX_SIZE:
        return None, f"{size} characters long once its repetitions are written out (more than {MAX_SIZE})"
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)  # `re` warns of nested sets it reads as literals
            re.compile(rewritten)
    except (re.error, RecursionError, OverflowError):
        return None, "Python's re cannot compile it"
    try:
        SchemaValidator(core_schema.str_schema(pattern=rewritten, regex_engine="rust-regex"))
    except SchemaError:
        return None, "pydantic-core's Rust regex refuses it"
    return rewritten, ""


def _rewritten(pattern: str) -> str:
    out: list[str] = []  # the pattern so far; a class being read goes to `members` first
    members: list[str] | None = None
    negated: list[str] = []  # the class's negated sets (`\\S` in `[\\s\\S]`)
    i = 0
    while i < len(pattern):
        char = pattern[i]
        into = out if members is None else members
        if char == "\\" and i + 1 < len(pattern):
            escaped = pattern[i + 1]
            in_class = members is not None
            if escaped.isascii() and escaped.isdigit():
                octal = _OCTAL.match(pattern, i + 1) if escaped == "0" or in_class else None
                if octal is None:
                    raise _Dropped(f"a backreference (\\{escaped}), which no linear-time engine checks")
                into.append(f"\\x{int(octal.group(), 8):02X}")  # a syntax error in `u` mode and in Rust
                i = octal.end()
                continue
            if escaped.lower() in _CLASSES:
                fixed = _CLASSES[escaped.lower()]
                if escaped.islower():
                    into.append(fixed if in_class else f"[{fixed}]")
                elif in_class:
                    negated.append(f"[^{fixed}]")
                else:
                    out.append(f"[^{fixed}]")
            elif escaped == "b" and in_class:
                into.append("\\x08")  # `[\\b]`: a backspace
            elif escaped in "bB":
                raise _Dropped(f"a word boundary (\\{escaped}): ASCII in ECMA-262, Unicode in re and Rust")
            elif escaped == "k":
                raise _Dropped("a backreference (\\k<name>), which no linear-time engine checks")
            elif _SURROGATE.match(pattern, i):
                raise _Dropped("a UTF-16 surrogate (\\uD800-\\uDFFF), no character in Rust")
            elif escaped.isascii() and escaped.isalnum():
                if escaped not in _LETTER_ESCAPES:
                    raise _Dropped(f"an escape (\\{escaped}) that means something else in each engine")
                into.append(char + escaped)
            elif escaped in _SYNTAX or (in_class and escaped == "-"):
                into.append(char + escaped)
            else:
                into.append(escaped)
            i += 2
            continue
        if char == "[":
            if members is not None:
                members.append("\\[")
            else:
                members, negated = [], []
                if pattern.startswith("^", i + 1):
                    members.append("^")
                    i += 1
        elif char == "]" and members is not None:
            out.append(_class(members, negated))
            members = None
        elif char == "." and members is None:
            out.append(_DOT)
        else:
            into.append(char)
        i += 1
    if members is not None:  # unclosed: left for the engines to refuse
        out.append("[" + "".join(members))
    return "".join(out)


def _class(members: list[str], negated: list[str]) -> str:
    """A class of `members` and the `negated` sets inside it: a class with a negated set (`[\\s\\S]`,
    `[\\W.]`) is the alternation of that set and the rest, as no class can hold a set's complement."""
    if not negated:
        return "[" + "".join(members) + "]"
    if members[:1] == ["^"]:
        raise _Dropped("a negated set inside a negated class, which has no form every engine reads alike")
    return "(?:" + "|".join([*negated, *(["[" + "".join(members) + "]"] if members else [])]) + ")"


class _Size:
    """A pattern's size with its repetitions written out (`a{3}` is 3, `(ab){2,5}` is 10, `a*` is 1),
    read as ECMA-262's `u` mode reads it; anything else it holds drops it (`_Dropped`)."""

    def __init__(self, pattern: str) -> None:
        self.pattern = pattern
        self.at = 0
        self.groups = 0

    def total(self) -> int:
        size = self.alternation()
        if self.at < len(self.pattern):  # only a `)` stops an alternation early
            raise _Dropped("an unmatched ')'")
        return size

    def alternation(self) -> int:
        size = self.sequence()
        while self.pattern.startswith("|", self.at):
            self.at += 1
            size += self.sequence()
        return size

    def sequence(self) -> int:
        size = 0
        while self.at < len(self.pattern) and self.pattern[self.at] not in "|)":
            atom, repeatable = self.atom()
            count = self.quantifier()
            if count is not None and not repeatable:
                raise _Dropped("a repeated assertion, a syntax error in ECMA-262's u mode")
            size += atom * (count or 1)
        return size

    def atom(self) -> tuple[int, bool]:
        """An atom's size, and whether a quantifier may follow it."""
        pattern, char = self.pattern, self.pattern[self.at]
        if char == "(":
            if pattern.startswith("(?", self.at) and not pattern.startswith("(?:", self.at):
                raise _Dropped("a lookaround or flag group, which no linear-time engine reads alike")
            self.at += 3 if pattern.startswith("(?:", self.at) else 1
            self.groups += 1
            if self.groups > _MAX_GROUPS:
                raise _Dropped(f"groups nested more than {_MAX_GROUPS} deep")
            size = self.alternation()
            if not pattern.startswith(")", self.at):
                raise _Dropped("an unclosed group")
            self.at += 1
            self.groups -= 1
            return size, True
        if char == "[":
            end = self.at + 1 + pattern.startswith("^", self.at + 1)
            while end < len(pattern) and pattern[end] != "]":
                end += 2 if pattern[end] == "\\" else 1
            if end >= len(pattern):
                raise _Dropped("an unclosed class")
            self.at = end + 1
            return 1, True
        if char in "^$":
            self.at += 1
            return 0, False
        if char in "*+?{":
            raise _Dropped("a quantifier that repeats nothing")
        if char in "}]":
            raise _Dropped(f"a lone '{char}', a syntax error in ECMA-262's u mode")
        self.at += self.escape() if char == "\\" else 1
        return 1, True

    def escape(self) -> int:
        """The length of the escape at this point: `\\xHH`, `\\uHHHH`, `\\u{...}`, `\\p{...}`, `\\cX`, `\\.`."""
        pattern, at = self.pattern, self.at
        kind = pattern[at + 1 : at + 2]
        if kind in ("u", "p", "P") and pattern.startswith("{", at + 2) and "}" in pattern[at:]:
            return pattern.index("}", at) - at + 1
        return {"x": 4, "u": 6, "c": 3}.get(kind, 2)

    def quantifier(self) -> int | None:
        """How many times the atom before is written out (`{2,5}`: 5; `*`: once), None when unquantified."""
        pattern, at = self.pattern, self.at
        if at >= len(pattern) or pattern[at] not in "*+?{":
            return None
        if pattern[at] == "{":
            braces = _BRACES.match(pattern, at)
            if braces is None:
                raise _Dropped("a '{' that is no quantifier, a syntax error in ECMA-262's u mode")
            low, comma, high = int(braces[1]), braces[2], braces[3]
            if high and int(high) < low:
                raise _Dropped("a quantifier {n,m} with m below n")
            count = int(high) if high else low + 1 if comma else low
            self.at = braces.end()
        else:
            count = 1
            self.at += 1
        if pattern.startswith("?", self.at):  # lazy
            self.at += 1
        if self.at < len(pattern) and pattern[self.at] in "*+?{":
            raise _Dropped("a quantifier of a quantifier")
        return max(count, 1)
