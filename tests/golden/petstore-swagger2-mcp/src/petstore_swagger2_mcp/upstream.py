"""The upstream API: base URL and credentials, all read from the environment at call time."""

from ._about import GENERATOR, VERSION
from ._runtime import Api

api = Api(
    env_prefix="PETSTORE_SWAGGER2_MCP",
    default_base_url="http://petstore.swagger.io/v1",
    schemes={},
    user_agent=f"petstore-swagger2-mcp/{VERSION} ({GENERATOR})",
)
