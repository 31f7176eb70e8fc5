"""typed-mcp: OpenAPI in, a typed MCP server package out.

The pipeline, one module per step: load -> normalize -> plan -> models -> render -> write.
"""

__version__ = "0.1.0"
