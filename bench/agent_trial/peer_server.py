"""The peer of the agent trial: FastMCP `from_openapi` with its BM25SearchTransform, over streamable
HTTP (its own venv: bench/.venv-fastmcp). Usage: peer_server.py API SPEC PORT."""

import json
import sys

import httpx2
import yaml
from fastmcp import FastMCP
from fastmcp.server.transforms.search import BM25SearchTransform

api, path, port = sys.argv[1], sys.argv[2], int(sys.argv[3])
with open(path, encoding="utf-8") as handle:
    spec = yaml.safe_load(handle) if path.endswith((".yaml", ".yml")) else json.load(handle)
client = httpx2.AsyncClient(base_url="http://127.0.0.1:9")  # never called: the trial makes no API call
server = FastMCP.from_openapi(openapi_spec=spec, client=client, name=api)
server.add_transform(BM25SearchTransform(max_results=10))
server.run(transport="http", host="127.0.0.1", port=port, show_banner=False)
