"""`python bench/catalog_listing.py PACKAGE_DIR OUT.json [N]`: list the tools of a generated package
(its first N) with the generator's catalog workers, as generation lists them, and print the wall
time, the workers' peak RSS and a digest of the listing (bench/GENERATION.md: the catalog step alone,
on Microsoft Graph). OUT.json gets the listing, to compare two versions of the workers byte for byte."""

from __future__ import annotations

import hashlib
import json
import resource
import sys
import time
from pathlib import Path

from typed_mcp.catalog.budget import BUDGET
from typed_mcp.catalog.pack import Packer
from typed_mcp.catalog.verify import CatalogWorkers


def main() -> None:
    package, out = Path(sys.argv[1]), Path(sys.argv[2])
    module = json.loads((package / "typed-mcp.json").read_text())["module"]
    catalog = json.loads((package / "src" / module / "catalog.json").read_text())
    names = [tool["name"] for tool in catalog["tools"]][: int(sys.argv[3]) if len(sys.argv) > 3 else None]
    start = time.perf_counter()
    packer = Packer()
    with CatalogWorkers(len(names)) as workers:
        tools = workers.tools(package / "src", module, names, keep=packer.add_listed)
        text = packer.text(tools, workers.trimmed, BUDGET)
    elapsed = time.perf_counter() - start
    out.write_text(text)
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024
    digest = hashlib.sha256(text.encode()).hexdigest()[:16]
    print(f"{len(tools)} tools listed in {elapsed:.1f} s; workers' peak RSS {peak} MiB; sha256 {digest}")


if __name__ == "__main__":
    main()
