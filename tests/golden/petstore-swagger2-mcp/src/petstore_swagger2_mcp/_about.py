"""What this package was generated from; the drift check compares these."""

from typing import Any

PACKAGE = "petstore-swagger2-mcp"
VERSION = "1.0.0"
API_TITLE = "Swagger Petstore"
API_VERSION = "1.0.0"
OPENAPI_VERSION = "3.0.3"
SPEC_SHA256 = "66f2cad010efb1ef12bd006fa082862134a5f523baadeb14781e22464e33ff19"
GENERATOR = "typed-mcp 0.1.0"
TOOL_COUNT = 3
# How the server presents itself (server info; its tools' icons): the spec's, or the config's [registry].
DESCRIPTION = "Tools for Swagger Petstore, one per REST operation."
WEBSITE_URL = None
ICONS: list[dict[str, Any]] = []
