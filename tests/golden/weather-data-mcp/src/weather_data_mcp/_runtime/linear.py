"""Regexes that meet a client's or an upstream's text run in pydantic-core's Rust `regex` engine:
its time grows with the text's length times the pattern's size, never exponentially (Python's `re`
backtracks: a copied e-mail pattern and 27 characters kept it busy for 40 s). pydantic-core is what
the models already check patterns with, so every pattern of a package is read by one engine. It
holds the interpreter while it searches, so its cost is bounded where the patterns are chosen (the
generator keeps none past 256 characters once repetitions are written out) and by the text's size."""

from __future__ import annotations

import functools

from pydantic_core import SchemaError, SchemaValidator, core_schema


@functools.lru_cache(maxsize=1024)
def engine(pattern: str) -> SchemaValidator | None:
    """A validator of strings that `pattern` matches somewhere (JSON Schema's `pattern`: a search,
    not anchored); None when the Rust engine refuses the pattern (the generator publishes none)."""
    try:
        return SchemaValidator(core_schema.str_schema(pattern=pattern, regex_engine="rust-regex"))
    except SchemaError:
        return None


def search(pattern: str, text: str) -> bool | None:
    """Whether `pattern` matches somewhere in `text`; None when the engine cannot read the pattern."""
    found = engine(pattern)
    return None if found is None else found.isinstance_python(text)


def fullmatch(pattern: str, text: str, *, ignore_case: bool = False) -> bool:
    """Whether `pattern`, written for Python's `re` with ASCII classes, matches the whole of `text`."""
    flags = "(?i-u)" if ignore_case else "(?-u)"  # ASCII classes and case folding, as re.ASCII
    return bool(search(f"{flags}^(?:{pattern})$", text))
