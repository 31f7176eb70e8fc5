"""Instances of a JSON schema drawn by hypothesis-jsonschema, deterministically."""

from __future__ import annotations

import warnings
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis_jsonschema import from_schema


def draw(schema: dict[str, Any], count: int) -> list[Any]:
    """`count` deterministic instances of a JSON schema (fewer when hypothesis cannot find them)."""
    found: list[Any] = []

    @settings(
        max_examples=count, derandomize=True, database=None, deadline=None, suppress_health_check=list(HealthCheck)
    )
    @given(from_schema(schema, allow_x00=False))
    def collect(value: Any) -> None:
        found.append(value)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        collect()
    unique: list[Any] = []
    for value in found:
        if value not in unique:
            unique.append(value)
    return unique[:count]
