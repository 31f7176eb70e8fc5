"""The upstream API: base URL and credentials, all read from the environment at call time."""

from ._about import GENERATOR, VERSION
from ._runtime import Api, Scheme

api = Api(
    env_prefix="PETSTORE_CURATED_MCP",
    default_base_url="https://petstore.swagger.io/v2",
    schemes={
        "basic": Scheme(
            "basic",
            (
                "PETSTORE_CURATED_MCP_BASIC_USERNAME",
                "PETSTORE_CURATED_MCP_BASIC_PASSWORD",
            ),
        ),
    },
    user_agent=f"petstore-curated-mcp/{VERSION} ({GENERATOR})",
    extra_headers={"X-Client": "golden"},
)
