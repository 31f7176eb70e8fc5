"""Running datamodel-code-generator on a set of schemas: the document it reads, the class names forced
on it, and what it answers (the models' source, and which schemas did not get the class they wanted).
Run in this process or in a model generator process (model_parts, parts_worker)."""

from __future__ import annotations

import copy
import json
import logging
import re
import tempfile
import warnings
from pathlib import Path
from typing import Any

from typed_mcp import guard, pointer
from typed_mcp.errors import SpecError
from typed_mcp.spec import repairs
from typed_mcp.spec.normalize import Document

NAMING = "full-path"  # inline models named by their path (OrderItemsAddress), not Address1..Address267

# Every object model derives from the runtime's OpenModel (open to extra fields, no redundant titles in its
# JSON schema). The code generator wants an absolute import path; it is made relative after generation.
BASE_MODULE, BASE_CLASS = guard.CODEGEN_BASE_MODULE, "OpenModel"  # the guard lets the code generator import it

NAME_TAKEN = re.compile(r"maps '[^']*' to '([^']+)', but that model name is already used")


class NameTaken(Exception):
    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.name = name


def job_for(doc: Document, schemas: dict[str, Any], class_names: dict[str, str]) -> dict[str, Any]:
    document = {
        "openapi": doc.data.get("openapi", "3.0.3"),
        "info": {"title": "models", "version": "0"},
        "paths": {},
        "components": {**(doc.data.get("components") or {}), "schemas": schemas},
    }
    # A name equal to its key is the code generator's own choice (see MAX_PASSES): not forced.
    name_map = {f"#/components/schemas/{pointer.escape(k)}": class_names[k] for k in schemas if class_names[k] != k}
    wanted = {k: class_names[k] for k in schemas}
    return {"document": document, "name_map": name_map, "wanted": wanted, "origin": doc.origin}


def codegen_job(job: dict[str, Any]) -> dict[str, Any]:
    """One part's answer, as JSON: `source` and the schemas it `misnamed`, or the class name the code
    generator `taken`, or an `error`. Run here or in a model generator process (model_parts)."""
    try:
        source, given = _codegen(job["document"], job["name_map"], job["origin"])
        return {"source": source, "misnamed": misnamed(job["wanted"], given)}
    except NameTaken as taken:
        return {"taken": taken.name}
    except SpecError as exc:
        return {"error": exc.message}


def misnamed(wanted: dict[str, str], given: list[tuple[str, str]]) -> list[str]:
    """The schemas that did not get their wanted class: not among the classes made from them, or not
    made a model while their name is another model's. `given`: (source, a JSON pointer; class name)
    for every model the code generator wrote; one source may give several (a union member's variant)."""
    classes_of: dict[str, set[str]] = {}
    for source, cls in given:
        classes_of.setdefault(source, set()).add(cls)
    held = {cls for _, cls in given}
    misnamed = []
    for key, cls in wanted.items():
        made = classes_of.get(f"#/components/schemas/{pointer.escape(key)}")
        if (made is not None and cls not in made) or (made is None and cls in held):
            misnamed.append(key)
    return misnamed


def _codegen(document: dict[str, Any], name_map: dict[str, str], origin: str) -> tuple[str, list[tuple[str, str]]]:
    """The models source, and which classes the code generator made of which schemas (its model
    metadata: source pointer, class name)."""
    from datamodel_code_generator import (
        DatetimeClassType,
        InputFileType,
        LiteralType,
        NamingStrategy,
        OpenAPIScope,
        PythonVersion,
        generate,
    )
    from datamodel_code_generator.enums import DataModelType

    with tempfile.TemporaryDirectory(prefix="typed-mcp-models-") as temp:
        metadata = Path(temp) / "models.json"
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                logging.getLogger("datamodel_code_generator").setLevel(logging.ERROR)
                out = generate(
                    copy.deepcopy(document),
                    input_file_type=InputFileType.OpenAPI,
                    openapi_scopes=[OpenAPIScope.Schemas],
                    output_model_type=DataModelType.PydanticV2BaseModel,
                    target_python_version=PythonVersion.PY_310,
                    extra_fields="allow",
                    base_class=f"{BASE_MODULE}.{BASE_CLASS}",
                    disable_timestamp=True,
                    use_annotated=True,
                    field_constraints=True,
                    strict_nullable=True,
                    use_schema_description=True,
                    enum_field_as_literal=LiteralType.All,
                    output_datetime_class=DatetimeClassType.Awaredatetime,
                    disable_future_imports=True,
                    formatters=[],
                    model_name_map=name_map,
                    emit_model_metadata=metadata,
                    naming_strategy=NamingStrategy(NAMING),
                    # One module whatever the schema names: by default a dot in one (`rfdiag.response`)
                    # may make the models a package of modules (as an array of inline items does).
                    treat_dot_as_module=False,
                    # `email` becomes pydantic's EmailStr and `uri` its AnyUrl, both replaced by the runtime's
                    # own (see RUNTIME_TYPES); strict clients have no `idn-email` check, so those stay plain strings.
                    # `url`, outside JSON Schema but common (Box), is a `uri`: else nothing told a caller.
                    type_mappings=["idn-email=string", "url=uri"],
                    model_extra_keys_without_x_prefix=set(repairs.PROPERTY_COUNT.values()),
                )
        except Exception as exc:  # the code generator raises many types; all mean "this schema set failed"
            taken = NAME_TAKEN.search(str(exc))
            if taken:
                raise NameTaken(taken.group(1)) from exc
            raise SpecError(
                f"model generation failed: {type(exc).__name__}: {str(exc).splitlines()[0][:300]}", source=origin
            ) from exc
        if not isinstance(out, str):
            raise SpecError("model generation produced several modules; expected one", source=origin)
        given = [(model["source_ref"], model["class_name"]) for model in json.loads(metadata.read_text())["models"]]
    return out, given
