"""Not part of generated packages (they get the `_runtime/` package): the format checks of
`_runtime/formats.py` under this file's old path, for `generator/strict_run.py`, which loads them by
path. Remove once strict_run loads `_runtime/formats.py` itself."""

import importlib.util
from pathlib import Path

_spec = importlib.util.spec_from_file_location("_typed_mcp_formats", Path(__file__).with_name("_runtime") / "formats.py")
_formats = importlib.util.module_from_spec(_spec)  # type: ignore[arg-type]
_spec.loader.exec_module(_formats)  # type: ignore[union-attr]
STRICT_FORMATS = _formats.STRICT_FORMATS
_EMAIL = _formats._EMAIL
