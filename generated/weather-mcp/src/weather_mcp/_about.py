"""What this package was generated from; the drift check compares these."""

from typing import Any

PACKAGE = "weather-mcp"
VERSION = "1.2.0"
API_TITLE = "Weather API"
API_VERSION = "1.2.0"
OPENAPI_VERSION = "3.1.0"
SPEC_SHA256 = "53a3f47ecd0871853660225d3995c70b3cc66661b29e78f9c793460ea989b886"
GENERATOR = "typed-mcp 0.1.0"
TOOL_COUNT = 10
# How the server presents itself (server info; its tools' icons): the spec's, or the config's [registry].
DESCRIPTION = "Current weather, forecasts and station reports for a few cities."
WEBSITE_URL = None
ICONS: list[dict[str, Any]] = []
