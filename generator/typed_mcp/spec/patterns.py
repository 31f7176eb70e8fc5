"""Schema patterns every engine that reads them agrees on: JSON Schema means ECMA-262 regexes, which
strict clients compile with the `u` flag (AJV), the MCP Python SDK's client with Python's `re`, and
pydantic-core (the generated models) with Rust's `regex` crate. Real specs write patterns one engine
refuses, and one refused pattern ends a whole listing or the server's start. So each pattern is
written in the common form of what it means, or dropped when it has none."""

from __future__ import annotations

import functools
import re
import warnings

from pydantic_core import SchemaError, SchemaValidator, core_schema

_SYNTAX = set("^$\\.*+?()[]{}|/")  # what ECMA-262's `u` mode lets a backslash escape as itself
_LETTER_ESCAPES = set("dDwWsSbBnrtfvcxupPk")  # letter escapes ECMA-262 gives a meaning
_SURROGATE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")  # half a UTF-16 pair: no character in Rust
_OCTAL = re.compile(r"0[0-7]{0,2}|[0-3][0-7]{2}")
_NAMED_GROUP = re.compile(r"\(\?<(?![=!])[A-Za-z_][A-Za-z0-9_]*>")
# ECMA-262's `\d` and `\w` are ASCII (also in `u` mode); Python's `re` and Rust read them as Unicode.
_ASCII_CLASSES = {"d": "0-9", "w": "A-Za-z0-9_"}
# So are its word boundaries: `\b` and `\B` spelled with ASCII lookarounds (which Rust's engine does
# not read: the models holding them check them with Python's `re`, see `rust_refuses`).
_WORD = "[A-Za-z0-9_]"
_BOUNDARIES = {
    "b": f"(?:(?<={_WORD})(?!{_WORD})|(?<!{_WORD})(?={_WORD}))",
    "B": f"(?:(?<={_WORD})(?={_WORD})|(?<!{_WORD})(?!{_WORD}))",
}


def portable_pattern(pattern: str) -> str | None:
    """`pattern` as every engine reads it alike, or None.

    - A named group, `(?<id>...)`, which Python's `re` cannot read, matches as a plain group does.
    - An escaped character that needs none (`\\:`, `\\@`) is refused by the `u` mode: written plain.
    - A legacy octal escape (`\\000`, `\\037` in a class) is written as the `\\xHH` it means.
    - A `[` inside a character class is a literal in ECMA-262 and in `re`, a nested class in Rust: escaped.
    - `\\d`, `\\w` (and `\\D`, `\\W`) are ASCII classes in ECMA-262 and Unicode ones in `re` and Rust
      (a server would pass `café` for `^\\w+$` that a strict client refuses): written as the ASCII
      classes they are; `\\D` or `\\W` inside a class has no such form, and drops the pattern.
    - So are the word boundaries `\\b` and `\\B` (a server would refuse `café` for `^caf\\b` and pass
      it for `^caf\\B`): written as ASCII lookarounds; `[\\b]` is the backspace it means.
    - A letter escape that ECMA-262 does not define (`\\Z`, `\\A`) means something else in each engine,
      and a UTF-16 surrogate (`\\uD800`) is a code unit in ECMA-262 and no character at all in Rust:
      such a pattern is dropped, as is one Python's `re` still cannot compile."""
    rewritten = _rewritten(_NAMED_GROUP.sub("(?:", pattern))
    if rewritten is None:
        return None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)  # `re` warns of nested sets it reads as literals
            re.compile(rewritten)
    except (re.error, RecursionError):
        return None
    return rewritten


def _rewritten(pattern: str) -> str | None:
    out: list[str] = []
    in_class = False
    i = 0
    while i < len(pattern):
        char = pattern[i]
        if char == "\\" and i + 1 < len(pattern):
            escaped = pattern[i + 1]
            if escaped.isascii() and escaped.isdigit():
                octal = _OCTAL.match(pattern, i + 1) if escaped == "0" or in_class else None
                if octal is not None:  # a legacy octal escape, a syntax error in `u` mode and in Rust
                    out.append(f"\\x{int(octal.group(), 8):02X}")
                    i = octal.end()
                    continue
                if in_class:
                    return None
                out.append(char + escaped)  # a backreference
            elif escaped.lower() in _ASCII_CLASSES:
                ascii_class = _ASCII_CLASSES[escaped.lower()]
                if escaped.islower():
                    out.append(ascii_class if in_class else f"[{ascii_class}]")
                elif in_class:
                    return None
                else:
                    out.append(f"[^{ascii_class}]")
            elif escaped in _BOUNDARIES:
                if in_class and escaped == "B":  # no meaning in a class in `u` mode
                    return None
                out.append("\\x08" if in_class else _BOUNDARIES[escaped])  # `[\b]`: a backspace
            elif escaped.isascii() and escaped.isalnum():
                if escaped not in _LETTER_ESCAPES or _SURROGATE.match(pattern, i):
                    return None
                out.append(char + escaped)
            elif escaped in _SYNTAX or (in_class and escaped == "-"):
                out.append(char + escaped)
            else:
                out.append(escaped)
            i += 2
            continue
        if char == "[":
            if in_class:
                out.append("\\[")
            else:
                in_class = True
                out.append(char)
                if pattern.startswith("^", i + 1):
                    out.append("^")
                    i += 1
        elif char == "]" and in_class:
            in_class = False
            out.append(char)
        else:
            out.append(char)
        i += 1
    return "".join(out)


@functools.lru_cache(maxsize=4096)
def rust_refuses(pattern: str) -> bool:
    """Whether pydantic-core's default engine (Rust's `regex` crate) refuses `pattern` that Python's
    `re` reads: a compiled form past Rust's size limit (`\\S{1,20000}`: a Unicode class repeated), so
    the models that hold it must check it with `regex_engine="python-re"`."""
    try:
        SchemaValidator(core_schema.str_schema(pattern=pattern, regex_engine="rust-regex"))
    except SchemaError:
        try:
            re.compile(pattern)
        except (re.error, RecursionError):
            return False
        return True
    return False
