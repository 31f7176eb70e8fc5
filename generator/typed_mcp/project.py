"""What `generate` and `check` run on: the command line's source, output, package name and snapshot,
else the config file's (`source`, `out`, `package_name`, `snapshot`; paths relative to the file), so
that `typed-mcp generate --config typed-mcp.toml` needs nothing else."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from typed_mcp.errors import ConfigError, TypedMcpError
from typed_mcp.plan.curation import load_config
from typed_mcp.spec.load import is_url


@dataclass(frozen=True)
class Target:
    source: str
    out: Path
    package_name: str | None
    snapshot: Path | None  # None: the command's own default


def resolve(
    source: str | None, out: Path | None, package_name: str | None, snapshot: Path | None, config: Path | None
) -> Target:
    """The command line wins; what it leaves out comes from the config; a missing source or output
    is one line saying where to give it."""
    loaded = load_config(config) if config is not None else None
    settings = loaded.config if loaded is not None else None
    base = loaded.path.parent if loaded is not None else Path()

    def local(value: str | None) -> Path | None:
        return None if value is None else base / value

    if source is None and settings is not None and settings.source is not None:
        source = settings.source if is_url(settings.source) else str(base / settings.source)
    if out is None and settings is not None:
        out = local(settings.out)
    for value, key, option in ((source, "source", "SOURCE"), (out, "out", "--out")):
        if value is None and config is not None:
            raise ConfigError(config, key, f"not set, and no {option} given")
        if value is None:
            raise TypedMcpError(f"give {option}, or a --config file that sets `{key}`")
    assert source is not None and out is not None
    return Target(
        source=source,
        out=out,
        package_name=package_name or (settings.package_name if settings is not None else None),
        snapshot=snapshot or (local(settings.snapshot) if settings is not None else None),
    )
