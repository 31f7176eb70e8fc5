"""A model with a field named like a builtin type (Microsoft Graph's `site.list`): the code generator
imports the builtin under an alias (`from builtins import list as list_aliased`), which the guard
once refused, so the whole API failed to generate."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from support import generate

SPEC = {
    "openapi": "3.0.3",
    "info": {"title": "Shelf", "version": "1"},
    "paths": {
        "/sites/{id}": {
            "get": {
                "operationId": "getSite",
                "parameters": [{"name": "id", "in": "path", "required": True, "schema": {"type": "string"}}],
                "responses": {
                    "200": {
                        "description": "ok",
                        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Site"}}},
                    }
                },
            }
        }
    },
    "components": {
        "schemas": {
            "Site": {
                "type": "object",
                "properties": {
                    "list": {"type": "string"},
                    "dict": {"type": "integer"},
                    "tags": {"type": "array", "items": {"type": "string"}},
                    "labels": {"type": "object", "additionalProperties": {"type": "string"}},
                },
            }
        }
    },
}


def test_a_field_named_like_a_builtin_type_generates_and_validates(tmp_path: Path):
    out = tmp_path / "shelf-mcp"
    generate(SPEC, out, "shelf-mcp")
    check = (
        "from shelf_mcp.models import Site\n"
        "site = Site.model_validate({'list': 'a', 'dict': 1, 'tags': ['x'], 'labels': {'k': 'v'}})\n"
        "assert (site.list, site.dict_, site.tags, site.labels) == ('a', 1, ['x'], {'k': 'v'}), site\n"
        "try:\n"
        "    Site.model_validate({'tags': 'not a list'})\n"
        "except ValueError:\n"
        "    pass\n"
        "else:\n"
        "    raise AssertionError('a string passed as a list')\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", check], cwd=out / "src", capture_output=True, text=True, timeout=120, check=False
    )
    assert proc.returncode == 0, proc.stderr
