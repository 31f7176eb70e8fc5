"""The embedded demo: a real Weather REST API (FastAPI) serving `/v1/openapi.json`.

It is the Weather example of the MCP Python SDK's structured-output documentation, as a REST
service, so generated tools can be compared with the hand-written ones. Needs the `dev` extra.
"""
