"""The documentation's snippets, as a reader copies them: every TOML snippet of the README, the
docs/ pages and the demo package's README is a config that typed-mcp loads (its schema and value checks), every YAML snippet that
is an overlay is one typed-mcp reads, and every JSON snippet parses. A page that shows a key the
config model lost, or a misspelt one, fails here (the config reference itself is generated from the
model: docs/hooks/generated_pages.py)."""

import importlib.util
import json
import re
from pathlib import Path

import pytest
import yaml

from support import DEMO
from support import REPO as ROOT
from typed_mcp.config import load_config
from typed_mcp.spec.overlay import read_overlay

# The generated package's README too: its users copy its snippets (tests/e2e/test_package_readme.py runs
# its commands).
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md")), ROOT / "generated" / "weather-mcp" / "README.md"]
FENCE = re.compile(r"^```(\w+)\n(.*?)^```$", re.M | re.S)


def snippets(language: str) -> list[tuple[str, str]]:
    """(page:line, body) of every fenced block in `language` across the README and docs/."""
    found = []
    for page in PAGES:
        text = page.read_text()
        for match in FENCE.finditer(text):
            if match.group(1) == language:
                where = f"{page.relative_to(ROOT)}:{text.count(chr(10), 0, match.start()) + 1}"
                found.append((where, match.group(2)))
    return found


def params(language: str) -> list:
    """The snippets as test parameters, each named by its page and line."""
    return [pytest.param(body, id=where) for where, body in snippets(language)]


def test_the_docs_have_snippets_of_each_kind():
    assert len(snippets("toml")) >= 2 and snippets("yaml") and snippets("json")


@pytest.mark.parametrize("body", params("toml"))
def test_every_toml_snippet_is_a_config_typed_mcp_loads(tmp_path: Path, body: str):
    # The overlays a snippet names are written beside it from the docs' own overlay snippets
    # (each starts with a comment naming its file), as a reader following the page would.
    for _, overlay in snippets("yaml"):
        name = re.match(r"# ([\w.-]+\.ya?ml)", overlay)
        if name:
            (tmp_path / name.group(1)).write_text(overlay)
    config = tmp_path / "typed-mcp.toml"
    config.write_text(body)
    load_config(config)  # raises ConfigError naming the key


@pytest.mark.parametrize("body", params("yaml"))
def test_every_overlay_snippet_is_an_overlay_typed_mcp_reads(tmp_path: Path, body: str):
    if "overlay" not in yaml.safe_load(body):
        pytest.skip("not an overlay")
    path = tmp_path / "overlay.yaml"
    path.write_text(body)
    assert read_overlay(path).actions


@pytest.mark.parametrize("body", params("json"))
def test_every_json_snippet_parses(body: str):
    # A snippet may show members of a bigger object ("curation": [...], ...): read as that object's body.
    text = body.strip()
    json.loads(text if text.startswith(("{", "[")) else "{" + text + "}")


def hook_module():
    """docs/hooks/generated_pages.py, the MkDocs hook that writes the reference pages."""
    spec = importlib.util.spec_from_file_location("generated_pages", ROOT / "docs" / "hooks" / "generated_pages.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def variables_read(package: Path, prefix: str) -> set[str]:
    """The environment variables a generated package's code names: `f"{prefix}_X"`, `ENV + "_X"` (or `env + "_X"`),
    the OAuth introspection settings' suffixes (`"OAUTH_X"`) and the literal names (credentials)."""
    found = set()
    for source in package.rglob("*.py"):
        text = source.read_text()
        found.update(re.findall(r'(?:\}|\b(?:ENV|env) \+ ")_([A-Z][A-Z0-9_]*)"', text))
        found.update(re.findall(r'"(OAUTH_[A-Z_]+)"', text))
        found.update(re.findall(rf"\b{prefix}_([A-Z][A-Z0-9_]*)", text))
    # A per-scheme override of an OAuth2 client-credentials token URL: listed beside such a scheme's
    # variables, and the demo API has none.
    found.discard("TOKEN_URL")
    return {f"{prefix}_{name}" for name in found}


def test_the_server_reference_lists_every_variable_the_server_reads():
    # The page of the server's flags and variables is built from the package's README tables and its
    # parser: every variable the runtime reads must be in a table, and every table row read.
    hook = hook_module()
    readme = (DEMO / "README.md").read_text()
    listed = {
        name
        for _, table in hook.environment_tables(readme)
        for row in table
        for name in re.findall(r"^\| `(WEATHER_MCP_[A-Z0-9_]+)`", row)
    }
    read = variables_read(DEMO / "src" / "weather_mcp", "WEATHER_MCP")
    assert len(read) > 20
    assert read - listed == set(), "read by the server, missing from the README's tables"
    assert listed - read == set(), "in the README's tables, read nowhere"
    page = hook.server_reference()
    assert "--oauth-introspection-client" in page and all(f"`{name}`" in page for name in read)
