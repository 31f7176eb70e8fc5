"""What this package was generated from; the drift check compares these."""

from typing import Any

PACKAGE = "petstore-curated-mcp"
VERSION = "1.0.0"
API_TITLE = "Swagger Petstore"
API_VERSION = "1.0.0"
OPENAPI_VERSION = "3.0.0"
SPEC_SHA256 = "b1633b6309c065c43d56be7c659b0f2c4be03be5a4013b7c3f74b32bd33f62eb"
GENERATOR = "typed-mcp 0.1.0"
TOOL_COUNT = 3
# How the server presents itself (server info; its tools' icons): the spec's, or the config's [registry].
DESCRIPTION = "A sample API that uses a petstore as an example to demonstrate features in the OpenAPI 3.0…"
WEBSITE_URL = "http://swagger.io"
ICONS: list[dict[str, Any]] = []
