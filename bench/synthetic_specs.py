"""Synthetic OpenAPI documents of a given size, for the scaling measurement."""

from __future__ import annotations

from typing import Any


def synthetic_spec(operations: int) -> dict[str, Any]:
    """An OpenAPI 3.0 document with `operations` GET operations, each with a path parameter, a query
    parameter and its own small object response schema. Deterministic."""
    paths, schemas = {}, {}
    for i in range(operations):
        schemas[f"Item{i}"] = {
            "type": "object",
            "required": ["id", "name"],
            "properties": {
                "id": {"type": "string"},
                "name": {"type": "string", "description": f"name of item {i}"},
                "count": {"type": "integer", "minimum": 0},
                "active": {"type": "boolean"},
            },
        }
        paths[f"/resources{i}/{{item_id}}"] = {
            "get": {
                "operationId": f"getResource{i}",
                "summary": f"Get resource {i}",
                "parameters": [
                    {"name": "item_id", "in": "path", "required": True, "schema": {"type": "string"}},
                    {
                        "name": "limit",
                        "in": "query",
                        "required": False,
                        "schema": {"type": "integer", "minimum": 1, "maximum": 100},
                    },
                ],
                "responses": {
                    "200": {
                        "description": "OK",
                        "content": {"application/json": {"schema": {"$ref": f"#/components/schemas/Item{i}"}}},
                    },
                },
            }
        }
    return {
        "openapi": "3.0.3",
        "info": {"title": f"Synthetic {operations}", "version": "1.0.0"},
        "servers": [{"url": "http://127.0.0.1:9"}],
        "paths": paths,
        "components": {"schemas": schemas},
    }
