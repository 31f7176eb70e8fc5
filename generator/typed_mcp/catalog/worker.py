"""A catalog worker (run as `python -m typed_mcp.catalog.worker GC_THRESHOLD`): lists tools of a
generated package the MCP SDK's own way.

It imports the SDK at once, while the generator is still writing the models; then it reads the
package's location, and after that one chunk of tool names per line. For each chunk it answers one
result: the chunk's tools as the SDK's server lists them (`MCPServer.list_tools()`, each dumped as
the server's session dumps what it sends). Tool and model modules stay imported between chunks.
Listing through an in-memory `Client` gives the same objects (the corpus checks it for every spec),
but parsing and dumping a big catalog again costs seconds of CPU.
"""

from __future__ import annotations

import gc
import importlib
import json
import sys
from typing import Any

import anyio
import pydantic
import pydantic.json_schema
from mcp.server import MCPServer

from typed_mcp.children import print_result


def _faster_schemas() -> None:
    """Two shortcuts that change how fast schemas are made, never what they are (the catalog tests
    compare with what the eager server lists through a Client): pydantic encodes every `None`
    default through a new TypeAdapter, and the SDK derives the output schema of a model again for
    each tool that returns it."""
    encode_default = pydantic.json_schema.GenerateJsonSchema.encode_default
    pydantic.json_schema.GenerateJsonSchema.encode_default = (  # type: ignore[method-assign]
        lambda self, dft: None if dft is None else encode_default(self, dft)
    )
    json_schema, schemas = pydantic.TypeAdapter.json_schema, {}

    def memo_json_schema(self: pydantic.TypeAdapter[Any], **options: Any) -> dict[str, Any]:
        try:
            key = (self._type, tuple(sorted(options.items())))
            hash(key)
        except (AttributeError, TypeError):
            return json_schema(self, **options)
        if getattr(self, "_config", None) is not None:
            return json_schema(self, **options)
        if key not in schemas:
            schemas[key] = json.dumps(json_schema(self, **options))
        return json.loads(schemas[key])  # a copy: the caller may change it

    pydantic.TypeAdapter.json_schema = memo_json_schema  # type: ignore[method-assign]


def main() -> None:
    gc.set_threshold(int(sys.argv[1]), 50, 1000)
    _faster_schemas()
    where = json.loads(sys.stdin.readline())
    sys.path.insert(0, where["src"])
    package = importlib.import_module(where["module"] + ".server")
    for line in sys.stdin:
        server = MCPServer(name="catalog")
        for name in json.loads(line):
            package._register(server, package.tool_entry(name))  # exactly as the package's eager server registers it
        tools = anyio.run(server.list_tools)
        print_result([tool.model_dump(mode="json", by_alias=True, exclude_none=True) for tool in tools])


if __name__ == "__main__":
    main()
