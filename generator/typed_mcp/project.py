"""What `generate` and `check` run on: the command line's source, output, package name and snapshot,
else the config file's (`source`, `out`, `package_name`, `snapshot`; paths relative to the file), so
that `typed-mcp generate --config typed-mcp.toml` needs nothing else. Both commands build their
`GenerateOptions` here, with the config read once."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from typed_mcp.config import LoadedConfig, load_config
from typed_mcp.errors import ConfigError, TypedMcpError
from typed_mcp.options import GenerateOptions
from typed_mcp.spec.load import is_url


@dataclass(frozen=True)
class Asked:
    """What the command line names of the target (None: not given there)."""

    source: str | None = None
    out: Path | None = None
    package_name: str | None = None
    snapshot: Path | None = None


@dataclass(frozen=True)
class Target:
    source: str
    out: Path
    package_name: str | None
    snapshot: Path | None  # None: the command's own default


def options(config: Path | None, asked: Asked, *, save_snapshot: bool = True, **settings: Any) -> GenerateOptions:
    """The options of one run: the config read (once) and the target resolved against it; a snapshot
    path without a suffix takes the source's format. `save_snapshot=False` (generate's --no-snapshot)
    saves no document at all, not even the config's snapshot. `settings`: the other GenerateOptions
    fields, as the command line gives them."""
    loaded = load_config(config) if config is not None else None
    target = resolve(asked, loaded)
    return GenerateOptions(
        source=target.source,
        out=target.out,
        package_name=target.package_name,
        snapshot=_with_suffix(target.snapshot, target.source) if save_snapshot else None,
        default_snapshot=save_snapshot,
        config=loaded,
        **settings,
    )


def resolve(asked: Asked, loaded: LoadedConfig | None) -> Target:
    """The command line wins; what it leaves out comes from the config; a missing source or output
    is one line saying where to give it."""
    source, out = asked.source, asked.out
    settings = loaded.config if loaded is not None else None
    base = loaded.path.parent if loaded is not None else Path()

    def local(value: str | None) -> Path | None:
        return None if value is None else base / value

    if source is None and settings is not None and settings.source is not None:
        source = settings.source if is_url(settings.source) else str(base / settings.source)
    if out is None and settings is not None:
        out = local(settings.out)
    for value, key, option in ((source, "source", "SOURCE"), (out, "out", "--out")):
        if value is None and loaded is not None:
            raise ConfigError(loaded.path, key, f"not set, and no {option} given")
        if value is None:
            raise TypedMcpError(f"give {option}, or a --config file that sets `{key}`")
    assert source is not None and out is not None
    return Target(
        source=source,
        out=out,
        package_name=asked.package_name or (settings.package_name if settings is not None else None),
        snapshot=asked.snapshot or (local(settings.snapshot) if settings is not None else None),
    )


def _with_suffix(snapshot: Path | None, source: str) -> Path | None:
    if snapshot is None or snapshot.suffix:
        return snapshot
    return snapshot.with_suffix(".yaml" if source.split("?")[0].endswith((".yaml", ".yml")) else ".json")
