"""The model generator process (run as `python -m typed_mcp.models.parts_worker`): generates the
models of the jobs it is sent, one at a time. Each line of stdin names a job file; each answer is
one result (see `codegen.codegen_job`)."""

from __future__ import annotations

import json
import sys

# Imported first, while the job file may still be written: it is most of this process's start.
import datamodel_code_generator  # noqa: F401

from typed_mcp.children import print_result
from typed_mcp.models.codegen import codegen_job


def main() -> None:
    for line in sys.stdin:
        with open(line.rstrip("\n"), encoding="utf-8") as handle:
            job = json.load(handle)
        print_result(codegen_job(job))


if __name__ == "__main__":
    main()
