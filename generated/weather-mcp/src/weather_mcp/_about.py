"""What this package was generated from; the drift check compares these."""

from typing import Any

PACKAGE = "weather-mcp"
VERSION = "1.2.0"
API_TITLE = "Weather API"
API_VERSION = "1.2.0"
OPENAPI_VERSION = "3.1.0"
SPEC_SHA256 = "a4a8c29b9ea4248f73f8d4cadb4b5f181ec347bcfb9b5f61cb6b766fae68ad0d"
GENERATOR = "typed-mcp 0.1.0"
TOOL_COUNT = 7
# How the server presents itself (server info; its tools' icons): the spec's, or the config's [registry].
DESCRIPTION = "Current weather, forecasts and station reports for a few cities."
WEBSITE_URL = None
ICONS: list[dict[str, Any]] = []
