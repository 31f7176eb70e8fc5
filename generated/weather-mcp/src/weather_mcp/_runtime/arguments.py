"""Tool arguments checked against the tool's published inputSchema (JSON Schema 2020-12) before the
SDK's argument model sees them: that model is lax pydantic, which also takes what the schema refuses
(`false` or `"5"` for an integer, a JSON string for an object) and would send it upstream. A
strict client's contract is the schema, so the schema decides; formats stay hints, as published.

Every regex of the schema (`pattern`, the names of `patternProperties`, and so what
`additionalProperties` leaves) is searched by the linear-time engine of `linear`, never by Python's
backtracking `re` that jsonschema uses. `unevaluatedProperties`, which reads `patternProperties`
through jsonschema's own `re` deep inside, is left to the SDK's argument model: pydantic never
publishes it."""

from __future__ import annotations

import logging
from collections.abc import Iterator, Mapping
from typing import Any

from jsonschema import Draft202012Validator, validators
from jsonschema.exceptions import ValidationError
from referencing import Registry

from .linear import search

logger = logging.getLogger(__name__)
MAX_ERRORS_SHOWN = 3
MAX_ERROR_CHARS = 200  # jsonschema's messages repeat the value, which may be huge


def _matches(pattern: str, text: str) -> bool:
    return search(pattern, text) is not False  # a pattern the engine refuses is not checked


def _pattern(validator: Any, pattern: str, instance: Any, schema: Mapping[str, Any]) -> Iterator[ValidationError]:
    if validator.is_type(instance, "string") and not _matches(pattern, instance):
        yield ValidationError(f"{instance!r} does not match {pattern!r}")


def _pattern_properties(
    validator: Any, patterns: Mapping[str, Any], instance: Any, schema: Mapping[str, Any]
) -> Iterator[ValidationError]:
    if not validator.is_type(instance, "object"):
        return
    for pattern, subschema in patterns.items():
        for name, value in instance.items():
            if _matches(pattern, name):
                yield from validator.descend(value, subschema, path=name, schema_path=pattern)


def _additional_properties(
    validator: Any, additional: Any, instance: Any, schema: Mapping[str, Any]
) -> Iterator[ValidationError]:
    if not validator.is_type(instance, "object"):
        return
    declared, patterns = schema.get("properties", {}), schema.get("patternProperties", {})
    extras = [n for n in instance if n not in declared and not any(_matches(p, n) for p in patterns)]
    if validator.is_type(additional, "object"):
        for extra in extras:
            yield from validator.descend(instance[extra], additional, path=extra)
    elif additional is False and extras:
        names = ", ".join(repr(name) for name in sorted(extras))
        if patterns:
            regexes = ", ".join(repr(pattern) for pattern in sorted(patterns))
            verb = "does" if len(extras) == 1 else "do"
            yield ValidationError(f"{names} {verb} not match any of the regexes: {regexes}")
        else:
            verb = "was" if len(extras) == 1 else "were"
            yield ValidationError(f"Additional properties are not allowed ({names} {verb} unexpected)")


def _not_checked(validator: Any, value: Any, instance: Any, schema: Mapping[str, Any]) -> Iterator[ValidationError]:
    return iter(())


LinearValidator = validators.extend(  # type: ignore[no-untyped-call]  # unannotated in types-jsonschema
    Draft202012Validator,
    {
        "pattern": _pattern,
        "patternProperties": _pattern_properties,
        "additionalProperties": _additional_properties,
        "unevaluatedProperties": _not_checked,
    },
)


def _refuse_retrieval(uri: str) -> Any:
    raise ValueError(f"{uri[:100]!r}: only a schema's own $defs are read")


def _fast(schema: dict[str, Any]) -> Any:
    """jsonschema-rs's validator of `schema`: its regexes in the linear-time `regex` engine, formats
    not checked (hints, as published), no $ref outside the schema read; None if it refuses the schema.
    Imported on a server's first call, not at its start (about 10 MB of RSS, 4 MB of it private)."""
    import jsonschema_rs

    try:
        return jsonschema_rs.validator_for(
            schema, validate_formats=False, retriever=_refuse_retrieval, pattern_options=jsonschema_rs.RegexOptions()
        )
    except Exception:  # noqa: BLE001  # the check below judges such a schema
        return None


class ArgumentCheck:
    """Two validators per tool, made on its first call: jsonschema-rs says, in a fraction of a
    microsecond, whether the arguments are valid; only when it does not (or cannot) does jsonschema,
    a hundred times slower, say what is wrong. jsonschema-rs is at least as strict (it also checks
    `unevaluatedProperties`), so what it accepts the check below accepts too."""

    def __init__(self) -> None:
        self._validators: dict[str, Any] = {}
        self._fast: dict[str, Any] = {}

    def refusal(self, name: str, schema: dict[str, Any], arguments: dict[str, Any]) -> str | None:
        """The error text for arguments the schema refuses, naming each field; None when it accepts them."""
        if name not in self._fast:
            self._fast[name] = _fast(schema)
        fast = self._fast[name]
        if fast is not None:
            try:
                if fast.is_valid(arguments):
                    return None
            except Exception:  # noqa: BLE001  # a value it cannot read (an integer past 64 bits): the check below
                pass
        validator = self._validators.get(name)
        if validator is None:
            # An empty registry: a $ref outside the schema is an error (the check is skipped), never
            # fetched (jsonschema's default still retrieves remote references, with a warning).
            validator = self._validators[name] = LinearValidator(schema, registry=Registry())
        try:
            errors = sorted(validator.iter_errors(arguments), key=_where)
        except Exception as exc:  # a schema this check cannot apply: the SDK's argument model judges
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
