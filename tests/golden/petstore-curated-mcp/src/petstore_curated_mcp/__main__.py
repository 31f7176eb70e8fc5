"""Command line: `python -m petstore_curated_mcp` serves MCP over stdio (or streamable HTTP)."""

import argparse

from ._about import API_VERSION, GENERATOR, SPEC_SHA256, VERSION
from ._runtime import cli
from ._runtime.server import Package

COMMAND = cli.Command(
    module="petstore_curated_mcp",
    title="Swagger Petstore",
    env="PETSTORE_CURATED_MCP",
    version=f"petstore-curated-mcp {VERSION} (API {API_VERSION}; spec sha256 {SPEC_SHA256}; {GENERATOR})",
)


def package() -> Package:
    """The server's description, read once the command line is (`--help` and `--version` do without)."""
    from .server import PACKAGE_INFO

    return PACKAGE_INFO


def parser() -> argparse.ArgumentParser:
    """The command line's parser (the documentation's reference of the server's flags is its help)."""
    return cli.parser(COMMAND)


def main(argv: list[str] | None = None) -> None:
    cli.main(COMMAND, package, argv)


if __name__ == "__main__":
    main()
