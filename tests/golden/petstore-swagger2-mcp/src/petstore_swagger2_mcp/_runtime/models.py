"""Base classes of the generated models: open to unknown fields, published without titles."""

from __future__ import annotations

from typing import Any, get_args

from pydantic import BaseModel, ConfigDict, model_validator


def _drop_titles(schema: dict[str, Any], cls: type) -> None:
    # Titles repeat the class and property names ("Html Url" for html_url): about 14% of a big
    # catalog for nothing a client uses. Descriptions, which say something, stay.
    schema.pop("title", None)
    for prop in (schema.get("properties") or {}).values():
        if isinstance(prop, dict):
            prop.pop("title", None)


class OpenModel(BaseModel):
    """Base of every generated model: unknown fields are kept (an API that adds a field must never
    break a client), and the JSON schema, which is the published outputSchema, has no titles."""

    model_config = ConfigDict(extra="allow", json_schema_extra=_drop_titles)


class PropertyCount:
    """How many properties an object with declared properties may have (the schema's minProperties
    and maxProperties), as a model's `json_schema_extra`: published in its JSON schema, and checked
    by CountedModel, so a client is told that `{}` is refused and the server refuses it too."""

    def __init__(self, low: int | None, high: int | None) -> None:
        self.low, self.high = low, high

    def __call__(self, schema: dict[str, Any], cls: type) -> None:
        _drop_titles(schema, cls)
        if self.low is not None:
            schema["minProperties"] = self.low
        if self.high is not None:
            schema["maxProperties"] = self.high

    def check(self, data: dict[str, Any]) -> None:
        if self.low is not None and len(data) < self.low:
            raise ValueError(f"at least {self.low} propert{'y' if self.low == 1 else 'ies'} required, got {len(data)}")
        if self.high is not None and len(data) > self.high:
            raise ValueError(f"at most {self.high} propert{'y' if self.high == 1 else 'ies'} allowed, got {len(data)}")


class CountedModel(OpenModel):
    """A model whose schema limits its number of properties (see PropertyCount)."""

    @model_validator(mode="before")
    @classmethod
    def _property_count(cls, data: Any) -> Any:
        count = cls.model_config.get("json_schema_extra")
        if isinstance(count, PropertyCount) and isinstance(data, dict):
            count.check(data)
        return data


# -- models built on first use ---------------------------------------------------------------------
# In a big group of mutually recursive models each model's validator holds the whole group: built
# all at import, they cost the group's size squared (Stripe's shape: 380 models, 17 s and 1.3 GB in
# every process that imports them). The generator bases such a group's models, and every model that
# uses one, on these (`from .._runtime import DeferredOpenModel as OpenModel`): pydantic builds a
# model when it is first used, and `build_models()` builds a tool's models before the server uses them.


class DeferredOpenModel(OpenModel):
    """OpenModel, built on first use."""

    model_config = ConfigDict(defer_build=True)


class DeferredCountedModel(CountedModel):
    """CountedModel, built on first use."""

    model_config = ConfigDict(defer_build=True)


def build_models(annotation: Any) -> None:
    """Build the models `annotation` names (a class, or a type such as `list[Model] | None`), each
    once, before adapters of it are made: an adapter of a built model shares its validator, and one
    of an unbuilt model makes its own copy (of the whole group)."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        annotation.model_rebuild()  # nothing to do when it is built already
    for argument in get_args(annotation):
        build_models(argument)
