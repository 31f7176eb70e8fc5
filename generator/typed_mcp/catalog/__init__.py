"""Stage 5: the tool catalog (tools/list) the MCP SDK itself lists for the rendered package, packed
into `catalog.json` and checked; catalogs of packages and specs compared for drift and diffs."""
