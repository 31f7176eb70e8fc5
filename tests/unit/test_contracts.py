"""One place for each contract between the generator and a package's runtime: `typed_mcp.runtime.contracts`,
which the generator imports and every package carries byte for byte as `_runtime/contracts.py`."""

from __future__ import annotations

import ast
import importlib
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from support import DEMO
from typed_mcp import config
from typed_mcp.catalog import diff, pack
from typed_mcp.plan import hints, parameters
from typed_mcp.render import search, vocabulary
from typed_mcp.runtime import contracts
from typed_mcp.spec import load

SOURCE = Path(contracts.__file__)


def _runtime(name: str):
    """A module of the committed demo package's runtime, imported in this process."""
    src = str(DEMO / "src")
    if src not in sys.path:
        sys.path.insert(0, src)
    return importlib.import_module(f"weather_mcp._runtime.{name}")


def test_the_generator_reads_each_contract_from_the_runtime():
    """The generator holds no copy of a contract: each name is the contracts module's own object."""
    assert parameters.HEADER_TOKEN is config.HEADER_TOKEN is contracts.HEADER_TOKEN
    assert parameters.client_owns_header is config.client_owns_header is contracts.client_owns_header
    assert load.CREDENTIAL_NAME is contracts.CREDENTIAL_NAME
    assert hints.IDEMPOTENT_METHODS is contracts.IDEMPOTENT_METHODS
    assert diff.OPERATION_META is contracts.OPERATION_META
    assert search.SEARCH_FORMAT is contracts.SEARCH_FORMAT
    assert search.SEARCH_WORD is vocabulary.SEARCH_WORD is config.SEARCH_WORD is contracts.SEARCH_WORD
    assert search.DELETE.split() == list(contracts.REMOVAL_WORDS)
    assert pack.CATALOG_FORMAT is contracts.CATALOG_FORMAT


def test_the_runtime_reads_each_contract_from_its_copy_of_the_same_file():
    copy = _runtime("contracts")
    assert Path(copy.__file__).read_bytes() == SOURCE.read_bytes()
    config, http, registry, found = _runtime("config"), _runtime("http"), _runtime("registry"), _runtime("search")
    assert config.HEADER_TOKEN is copy.HEADER_TOKEN and config.client_owns_header is copy.client_owns_header
    assert config.CREDENTIAL_NAME is copy.CREDENTIAL_NAME
    assert http.IDEMPOTENT_METHODS is copy.IDEMPOTENT_METHODS
    assert registry.OPERATION_META is copy.OPERATION_META
    assert found.SEARCH_FORMAT is copy.SEARCH_FORMAT and found.SEARCH_WORD is copy.SEARCH_WORD
    assert found.REMOVAL == frozenset(copy.REMOVAL_WORDS)
    server = (DEMO / "src" / "weather_mcp" / "server.py").read_text()
    assert "unpack_catalog" in server and '"shared"' not in server  # the catalog layout is read in one place


@pytest.mark.slow  # imports in a fresh interpreter
def test_the_contracts_import_nothing_outside_the_standard_library():
    """The generator reads them without loading the MCP SDK, and a package's copy stands alone."""
    tree = ast.parse(SOURCE.read_text())
    imported = {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
    imported |= {node.module or "" for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
    assert imported and all(name.split(".")[0] in {*sys.stdlib_module_names, "__future__"} for name in imported)
    probe = "import sys, typed_mcp.runtime.contracts; print(sorted({'mcp', 'pydantic', 'httpx'} & set(sys.modules)))"
    assert subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout == "[]\n"


def test_credential_names_are_read_alike():
    names = ("access_token", "X-Api-Key", "PRIVATE-TOKEN", "X-Amz-Signature", "sig", "Cookie", "X-Auth-User")
    assert all(contracts.CREDENTIAL_NAME.search(name) for name in names)
    plain = ("format", "version", "X-Api-Version", "X-Client", "page", "design", "signal", "X-Tenant")
    assert not any(contracts.CREDENTIAL_NAME.search(name) for name in plain)


def test_a_packed_catalog_unpacks_to_its_tools():
    shared = {"type": "object", "properties": {"id": {"type": "integer"}}}
    tools = [
        {"name": name, "inputSchema": {"type": "object", "$defs": {"Item": shared}}, "outputSchema": {"$defs": {}}}
        for name in ("a", "b")
    ]
    data = json.loads(pack.pack(tools, {"b": 1}, 100))
    assert data["format"] == contracts.CATALOG_FORMAT and data["shared"] == [shared]
    unpacked, sizes, trimmed = contracts.unpack_catalog(data)
    assert unpacked == tools and trimmed == ["b"] and len(sizes) == 2
    assert unpacked[0]["inputSchema"]["$defs"]["Item"] is unpacked[1]["inputSchema"]["$defs"]["Item"]


def test_a_catalog_is_read_back_with_its_shared_schemas_as_pack_wrote_them():
    """`pack.read` (the last catalog, when a spec change reuses its tools) gives what `json.loads`
    gives, the shared schemas and the tools as their texts, and refuses any text `pack` does not write."""
    tools = [
        {"name": "a", "inputSchema": {"type": "object", "$defs": {"I": {"const": "ü"}, "J": {"type": "null"}}}},
        {"name": "b", "inputSchema": {"type": "object", "$defs": {"I": {"const": "ü"}}}, "outputSchema": {}},
    ]
    for text in (pack.pack(tools, {"b": 1}, 100), pack.pack([]), pack.pack(tools[1:])):
        data, whole = pack.read(text), json.loads(text)
        assert {
            key: [json.loads(each) for each in value] for key, value in data.items() if key in ("shared", "tools")
        } == {
            "shared": whole["shared"],
            "tools": whole["tools"],
        }
        assert {**data, "shared": whole["shared"], "tools": whole["tools"]} == whole
    text = pack.pack(tools)
    for bad in (
        text.replace('"const":"ü"', '"const": "ü"'),  # a shared schema in another form
        text.replace('"name":"a"', '"name": "a"'),  # a tool in another form
        text.replace('"const":"ü"', '"const":"\\u00fc"'),
        text.replace('"tools"', '"sizes"'),  # a key twice
        text.rstrip() + "x",
        text.replace("]", "", 1),
        "[]",
        "",
    ):
        with pytest.raises(ValueError):
            pack.read(bad)


def test_tools_packed_in_any_order_give_the_same_catalog():
    """The generator packs each chunk of tools as a worker returns it, in whatever order they finish:
    the catalog's shared entries are still numbered by their first use in the tools' order."""
    models = [{"type": "object", "properties": {"n": {"const": i}}} for i in range(6)]
    tools = [
        {
            "name": f"t{i}",
            "inputSchema": {"type": "object", "$defs": {f"M{j}": models[j] for j in (i % 6, (i * 5) % 6)}},
            "outputSchema": {"$defs": {"Out": models[(i * 7 + 3) % 6]}, "title": "ü"},
        }
        for i in range(12)
    ]
    whole = pack.pack(tools, {"t3": 1}, 100)
    assert whole == json.dumps(json.loads(whole), ensure_ascii=False, separators=(",", ":")) + "\n"
    for order in (list(reversed(range(12))), [5, 0, 11, 2, 9, 1, 7, 3, 10, 4, 8, 6]):
        packer = pack.Packer()
        packed: list[Any] = [None] * len(tools)
        for i in order:
            packed[i] = packer.add(tools[i])
        assert packer.text(packed, {"t3": 1}, 100) == whole
    assert json.loads(whole)["shared"][:2] == [models[0], models[3]]  # t0's, first
