"""The upstream API: base URL and credentials, all read from the environment at call time."""

from ._about import GENERATOR, VERSION
from ._runtime import Api, Scheme

api = Api(
    env_prefix="WEATHER_DATA_MCP",
    default_base_url="http://127.0.0.1:8000",
    schemes={
        "HTTPBearer": Scheme(
            "bearer",
            ("WEATHER_DATA_MCP_HTTP_BEARER_TOKEN",),
        ),
    },
    user_agent=f"weather-data-mcp/{VERSION} ({GENERATOR})",
)
