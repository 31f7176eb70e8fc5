"""Write $TRIAL_WORK/peer_names.json: FastMCP's tool name -> "METHOD /path" for each API of the trial
(its `mcp_component_fn` hook), for score.py. Run with the peer's venv: peer_names.py STRIPE AIRFLOW
(the specs of the blind3 trial), or peer_names.py API=SPEC...."""

import json
import os
import sys

import httpx2
import yaml
from fastmcp import FastMCP

names: dict[str, dict[str, str]] = {}
given = [arg.partition("=") for arg in sys.argv[1:]]
pairs = (
    [(api, path) for api, _, path in given]
    if all(sep for _, sep, _ in given)
    else list(zip(("stripe", "airflow"), sys.argv[1:3], strict=True))
)
for api, path in pairs:
    with open(path, encoding="utf-8") as handle:
        spec = yaml.safe_load(handle) if path.endswith((".yaml", ".yml")) else json.load(handle)
    found: dict[str, str] = {}
    names[api] = found

    def record(route, component, found=found) -> None:
        found[component.name] = f"{route.method.upper()} {route.path}"

    FastMCP.from_openapi(
        openapi_spec=spec, client=httpx2.AsyncClient(base_url="http://127.0.0.1:9"), mcp_component_fn=record
    )
with open(os.path.join(os.environ.get("TRIAL_WORK", "."), "peer_names.json"), "w", encoding="utf-8") as out:
    json.dump(names, out)
