"""What one generation is asked to do: built once by the command line (or a caller) and carried
through the pipeline as one value."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from typed_mcp.profile import Profile

if TYPE_CHECKING:
    from typed_mcp.config import LoadedConfig  # the config's schema loads the spec layer: not for `--help`


@dataclass(frozen=True)
class GenerateOptions:
    source: str  # a file path or an http(s) URL
    out: Path  # the project folder to write (replaced only when everything succeeded)
    package_name: str | None = None  # the distribution name; default: from the API title
    headers: Mapping[str, str] = field(default_factory=dict)  # sent when fetching a URL; never written
    snapshot: Path | None = None  # where the document is saved after a successful run
    default_snapshot: bool = False  # without `snapshot`, save a fetched document as specs/<package>.json|yaml
    strict: bool = False  # fail when any operation would be skipped
    verify: bool = True  # check the listed catalog against the plan
    allow_remote_refs: bool = False  # fetch http(s) `$ref`s
    allow_private_refs: bool = False  # ... also from loopback, private and link-local addresses
    ref_root: Path | None = None  # local `$ref`s stay inside it (default: the spec file's folder)
    version: str | None = None  # the package version; default: the API's info.version as PEP 440
    cache: bool = True  # reuse the models and catalog of an earlier run with the same inputs
    tool_prefix: str = ""  # starts every tool name (hosts that mix servers)
    config: LoadedConfig | None = None  # the curation config, read once (project.options reads it)
    overlays: tuple[Path, ...] = ()  # OpenAPI Overlay documents, applied in order before anything reads the spec
    profile: Profile | None = None  # None: the config's (default: Profile.DEFAULT)

    @property
    def chosen_profile(self) -> Profile:
        """The profile asked for, else the config's: the one place the two are weighed."""
        if self.profile is not None:
            return self.profile
        return self.config.config.profile if self.config is not None else Profile.DEFAULT
