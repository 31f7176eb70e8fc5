"""`typed-mcp bundle`: an MCPB bundle (`.mcpb`, the MCP Bundle format of `@anthropic-ai/mcpb`) of a
generated package, for one-click installation in desktop hosts.

Layout (MCPB manifest 0.4, server type `python`): `manifest.json`; `server/main.py`, the entry point;
`server/<module>/`, the package's own code; `server/lib/`, its dependencies installed from wheels
with `pip install --target` (the spec's way for Python); `server/requirements.txt`, what `lib/`
holds. `manifest`, `vendor` and `archive` each do one of these; `build` puts them together.
"""

from typed_mcp.mcpb.build import BundleError, build_bundle

__all__ = ["BundleError", "build_bundle"]
