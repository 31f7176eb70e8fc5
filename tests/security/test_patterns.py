"""Every regular expression of the generator and the runtime is linear in the text it scans (spec
text, upstream answers and model arguments are untrusted): each module-level pattern of `typed_mcp`
is searched through hostile texts (long runs of each kind of character and of the pairs that make
a backtracking engine rescan), and none may take long. A pattern that is quadratic under `search`
but is only ever applied where that cannot happen is listed in EXEMPT with the reason; a new pattern
is checked without anyone writing a test for it.

Found this way (2026-12-06): names' `([A-Z]+)([A-Z][a-z])` (snake_case of every operationId, path
segment and schema name) took 2 s on 20,000 capitals and 50 s on 100,000; the abbreviation pattern of
render/vocabulary.py 10 s on a title of one 32,000-letter word; a summary's Markdown link pattern
1.3 s on 32,000 brackets."""

from __future__ import annotations

import ast
import functools
import importlib
import pkgutil
import re
import time
from pathlib import Path

import pytest

import typed_mcp

ANCHORED: set[str] = set()  # written where they are used, and used with `match` or `fullmatch`
CALLS = {"compile", "search", "match", "fullmatch", "sub", "subn", "split", "findall", "finditer"}
SIZE = 30_000  # characters of each hostile text
BUDGET = 0.5  # seconds one search may take (linear patterns take a few milliseconds; the holes took 1-10 s)
UNITS = [
    *"a A0[(<`-_./{\\*&#@:'\"\n\t!?,;=)]}>|~$%^+",
    *("a ", "a-", "[a", "a.", "a/", "{a", "<a", "a@", "a_", "0.", "a\n", "a1", "A ", "(a", "a.b@", "ab ", "Aa"),
]
# Patterns that only ever see text too short to matter, or run in the linear engine, or are anchored
# (`fullmatch` from one start is linear in them): the reason, for each.
EXEMPT = {
    "typed_mcp.runtime.formats.EMAIL": "run by runtime/linear.py's linear-time engine, never by `re`",
    "typed_mcp.plan.responses._MEDIA_TYPE": "only `fullmatch` on a media type key",
    "typed_mcp.runtime.files.MEDIA_TYPE": "only `fullmatch` on one header value",
    **{
        f"typed_mcp.runtime.{module}.VALUES[{index}][0]": "only on a search query, at most 500 characters"
        for module in ("search", "vocabulary")
        for index in range(9)
    },
}


def written(found: dict[str, re.Pattern[str]]) -> None:
    """The patterns written where they are used: `re.sub(r"...", ...)` and the like, in any function
    (their source read with `ast`; a pattern given as a variable is a module-level one, found below)."""
    root = Path(typed_mcp.__file__).parent
    for source in sorted(root.rglob("*.py")):
        tree = ast.parse(source.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and isinstance(node.func.value, ast.Name)
                and node.func.value.id == "re"
                and node.func.attr in CALLS - {"compile"}  # a compiled one is found by its name below
                and node.args
                and isinstance(node.args[0], ast.Constant)
                and isinstance(node.args[0].value, str)
            ):
                name = f"{source.relative_to(root.parent)}:{node.lineno}"
                found.setdefault(name, re.compile(node.args[0].value))
                ANCHORED.update({name} if node.func.attr in ("match", "fullmatch") else ())


@functools.cache
def patterns() -> dict[str, re.Pattern[str]]:
    """Every compiled pattern a module of typed_mcp holds at module level (alone, or in a tuple), and
    every one written where it is used."""
    found: dict[str, re.Pattern[str]] = {}
    written(found)
    for info in pkgutil.walk_packages(typed_mcp.__path__, "typed_mcp."):
        if info.name.endswith("__main__"):
            continue
        module = importlib.import_module(info.name)
        for name, value in vars(module).items():
            if isinstance(value, re.Pattern):
                found.setdefault(f"{info.name}.{name}", value)
            elif isinstance(value, tuple | list):
                for index, item in enumerate(value):
                    inner = item if isinstance(item, tuple) else (item,)
                    for position, pattern in enumerate(inner):
                        if isinstance(pattern, re.Pattern):
                            suffix = f"[{index}][{position}]" if isinstance(item, tuple) else f"[{index}]"
                            found.setdefault(f"{info.name}.{name}{suffix}", pattern)
    return found


def test_the_scan_finds_the_patterns_it_must():
    """A scan that found nothing would pass for nothing: the known patterns are among those found."""
    found = patterns()
    assert len(found) > 60
    assert any(":" in name and name.startswith("typed_mcp/names.py:") for name in found)  # written in place
    assert {
        "typed_mcp.names._CAMEL_2",
        "typed_mcp.render.vocabulary._DEFINED",
        "typed_mcp.plan.prose._MARKDOWN_ONLY",
    } <= set(found)
    assert set(EXEMPT) <= set(found), set(EXEMPT) - set(found)


@pytest.mark.parametrize("name", sorted(set(patterns()) - set(EXEMPT)))
def test_every_pattern_is_linear_in_hostile_text(name):
    """Searched (or matched from the start, where its only use is `match` or `fullmatch`)."""
    pattern = patterns()[name]
    for unit in UNITS:
        text = unit * (SIZE // len(unit))
        started = time.perf_counter()
        (pattern.fullmatch if name in ANCHORED else pattern.search)(text)
        took = time.perf_counter() - started
        assert took < BUDGET, f"{name} took {took:.2f} s on {unit!r} x {SIZE // len(unit)}: {pattern.pattern[:80]}"
