"""Tool arguments checked against the tool's published inputSchema (JSON Schema 2020-12) before the
SDK's argument model sees them: that model is lax pydantic, which also takes what the schema refuses
(`false` or `"5"` for an integer, a JSON string for an object) and would send it upstream. A
strict client's contract is the schema, so the schema decides; formats stay hints, as published."""

from __future__ import annotations

import logging
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError

logger = logging.getLogger(__name__)
MAX_ERRORS_SHOWN = 3
MAX_ERROR_CHARS = 200  # jsonschema's messages repeat the value, which may be huge


class ArgumentCheck:
    """One validator per tool, made on its first call."""

    def __init__(self) -> None:
        self._validators: dict[str, Draft202012Validator] = {}

    def refusal(self, name: str, schema: dict[str, Any], arguments: dict[str, Any]) -> str | None:
        """The error text for arguments the schema refuses, naming each field; None when it accepts them."""
        validator = self._validators.get(name)
        if validator is None:
            validator = self._validators[name] = Draft202012Validator(schema)
        try:
            errors = sorted(validator.iter_errors(arguments), key=_where)
        except Exception as exc:  # a schema Python cannot apply (a pattern `re` cannot compile): the SDK judges
            logger.info("tool %r: inputSchema check skipped: %s", name, type(exc).__name__)
            return None
        if not errors:
            return None
        shown = [_describe(error) for error in errors[:MAX_ERRORS_SHOWN]]
        if len(errors) > len(shown):
            shown.append(f"... and {len(errors) - len(shown)} more")
        return f"invalid arguments for tool {name!r}: " + "; ".join(shown)


def _describe(error: ValidationError) -> str:
    """`body.id: 'abc' is too short (minLength: 2)`: where, what, and the keyword. For an anyOf or
    oneOf, the failure inside the branch whose type matched (not "not of type 'null'")."""
    while error.context:
        specific = [sub for sub in error.context if sub.validator != "type"]
        error = (specific or error.context)[0]
    keyword = str(error.validator)
    if isinstance(error.validator_value, (int, float, str)) and len(str(error.validator_value)) <= 40:
        keyword = f"{keyword}: {error.validator_value}"
    return f"{_where(error)}: {_bounded(error.message)} ({keyword})"


def _where(error: ValidationError) -> str:
    return ".".join(str(part) for part in error.absolute_path) or "(arguments)"


def _bounded(message: str) -> str:
    if len(message) <= MAX_ERROR_CHARS:
        return message
    half = MAX_ERROR_CHARS // 2
    return f"{message[:half]}…{message[-half:]}"
