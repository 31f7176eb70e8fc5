"""Semantic diff of two MCP tool catalogs: every rule on a crafted old/new pair, plus the reports."""

from __future__ import annotations

import copy
import json

import pytest

from typed_mcp.catalog.diff import (
    Change,
    diff_catalogs,
    has_breaking,
    render_json,
    render_markdown,
    render_text,
    summarize,
)


def tool(
    name: str,
    args: dict | None = None,
    required=(),
    output: dict | None = None,
    *,
    defs: dict | None = None,
    operation: str | None = None,
    **extra,
) -> dict:
    """A tool as `tools/list` returns it; outputs are wrapped like the generator wraps non-objects."""
    input_schema = {"type": "object", "properties": args or {}, "required": list(required)}
    if defs:
        input_schema["$defs"] = defs
    entry = {
        "name": name,
        "title": None,
        "description": f"The {name} tool.",
        "inputSchema": input_schema,
        "outputSchema": output,
        "annotations": {"readOnlyHint": True, "destructiveHint": False},
    }
    if operation:
        entry["_meta"] = {"typed-mcp/operation": operation}
    entry.update(extra)
    return entry


def wrapped(result: dict, defs: dict | None = None) -> dict:
    schema = {"type": "object", "properties": {"result": result}, "required": ["result"], "additionalProperties": True}
    if defs:
        schema["$defs"] = defs
    return schema


def model(properties: dict, required=(), **extra) -> dict:
    return {
        "type": "object",
        "properties": properties,
        "required": list(required),
        "additionalProperties": True,
        **extra,
    }


def catalog(*tools: dict) -> dict:
    return {"tools": list(tools)}


def diff_tool(old: dict, new: dict) -> list[Change]:
    return diff_catalogs(catalog(old), catalog(new))


def only(changes: list[Change], kind: str, path: str | None = None) -> Change:
    """The single change of `kind` (at `path`); fails loudly listing what was found instead."""
    found = [c for c in changes if c.kind == kind and (path is None or c.path == path)]
    assert len(found) == 1, f"expected one {kind} at {path!r}, got: {changes}"
    return found[0]


def kinds(changes: list[Change]) -> set[tuple[str, str, bool]]:
    return {(c.kind, c.path, c.breaking) for c in changes}


INT, STR, NUM = {"type": "integer"}, {"type": "string"}, {"type": "number"}
NULLABLE_STR = {"anyOf": [{"type": "string"}, {"type": "null"}], "default": None}


# --- tools -----------------------------------------------------------------------------------------


def test_tool_added_is_compatible_and_removed_is_breaking():
    changes = diff_catalogs(catalog(tool("a"), tool("b")), catalog(tool("b"), tool("c")))
    assert kinds(changes) == {("tool_removed", "", True), ("tool_added", "", False)}
    assert only(changes, "tool_removed").tool == "a"
    assert only(changes, "tool_added").tool == "c"


def test_rename_is_detected_through_the_operation_and_its_schema_still_diffed():
    old = tool("repos_get", {"owner": STR}, ["owner"], operation="GET /repos/{owner}/{repo}")
    new = tool("get_repo", {"owner": STR, "repo": STR}, ["owner", "repo"], operation="GET /repos/{owner}/{repo}")
    changes = diff_catalogs(catalog(old), catalog(new))
    renamed = only(changes, "tool_renamed")
    assert (renamed.tool, renamed.path, renamed.breaking) == ("get_repo", "", True)
    assert "repos_get" in renamed.detail
    assert not [c for c in changes if c.kind in ("tool_added", "tool_removed")]
    assert only(changes, "input_required_added", "repo").tool == "get_repo"
    assert summarize(changes)["tools_renamed"] == 1


@pytest.mark.parametrize(
    ("old_key", "new_key"),
    [
        ("typed-mcp/operation", "io.github.typed-mcp/operation"),  # a catalog from before the reverse-DNS keys
        ("io.github.typed-mcp/operation", "io.github.typed-mcp/operation"),
    ],
)
def test_a_rename_is_detected_across_the_old_and_the_reverse_dns_operation_key(old_key: str, new_key: str):
    """Packages write `io.github.typed-mcp/operation` (the _meta key format of MCP 2026-07-28); a catalog
    committed before still says `typed-mcp/operation`, and `typed-mcp diff` pairs the two."""
    old = {**tool("repos_get", {"owner": STR}, ["owner"]), "_meta": {old_key: "GET /repos/{owner}"}}
    new = {**tool("get_repo", {"owner": STR}, ["owner"]), "_meta": {new_key: "GET /repos/{owner}"}}
    changes = diff_catalogs(catalog(old), catalog(new))
    assert {c.kind for c in changes} == {"tool_renamed", "description_changed"}  # not removed + added
    assert only(changes, "tool_renamed").detail.startswith("Tool renamed from 'repos_get' to 'get_repo'")


def test_the_diff_reads_the_operation_key_the_packages_write():
    from typed_mcp.runtime import contracts

    meta = contracts
    assert (
        meta.OPERATION == "io.github.typed-mcp/operation" and meta.LEGACY_PREFIX + "operation" == "typed-mcp/operation"
    )


def test_without_operation_meta_a_rename_is_a_removal_and_an_addition():
    changes = diff_catalogs(catalog(tool("old_name")), catalog(tool("new_name")))
    assert {c.kind for c in changes} == {"tool_added", "tool_removed"}


def test_ambiguous_operation_matches_are_not_guessed():
    old = catalog(tool("a", operation="GET /x"), tool("b", operation="GET /x"))
    new = catalog(tool("c", operation="GET /x"))
    assert {c.kind for c in diff_catalogs(old, new)} == {"tool_added", "tool_removed"}


def test_identical_catalogs_have_no_changes():
    cat = catalog(tool("a", {"q": STR}, ["q"], wrapped(INT)), tool("b"))
    changes = diff_catalogs(cat, copy.deepcopy(cat))
    assert changes == []
    assert not has_breaking(changes)
    assert render_text(changes) == "No changes.\n"
    assert "No changes." in render_markdown(changes)


# --- inputs ----------------------------------------------------------------------------------------


def test_new_arguments_required_is_breaking_optional_is_not():
    changes = diff_tool(tool("t", {"q": STR}, ["q"]), tool("t", {"q": STR, "owner": STR, "page": INT}, ["q", "owner"]))
    assert only(changes, "input_required_added", "owner").breaking
    assert not only(changes, "input_optional_added", "page").breaking


def test_removed_argument_is_breaking():
    changes = diff_tool(tool("t", {"q": STR, "page": INT}, ["q"]), tool("t", {"q": STR}, ["q"]))
    assert kinds(changes) == {("input_removed", "page", True)}


def test_requiredness_flips_of_arguments():
    changes = diff_tool(tool("t", {"a": STR, "b": STR}, ["a"]), tool("t", {"a": STR, "b": STR}, ["b"]))
    assert kinds(changes) == {("input_became_optional", "a", False), ("input_became_required", "b", True)}


@pytest.mark.parametrize(
    ("old", "new", "kind", "breaking"),
    [
        (INT, STR, "input_type_changed", True),
        (NUM, INT, "input_type_narrowed", True),
        (INT, NUM, "input_type_widened", False),
        ({"type": "string"}, NULLABLE_STR, "input_type_widened", False),
        (NULLABLE_STR, {"type": "string"}, "input_type_narrowed", True),
        ({"type": "string"}, {}, "input_type_widened", False),
    ],
)
def test_input_type_changes(old, new, kind, breaking):
    changes = [
        c for c in diff_tool(tool("t", {"x": old}), tool("t", {"x": new})) if not c.kind.endswith("default_changed")
    ]
    assert kinds(changes) == {(kind, "x", breaking)}


def test_input_enum_narrowed_and_widened_through_defs():
    def state(*values):
        return tool(
            "t",
            {"state": {"$ref": "#/$defs/State"}},
            ["state"],
            defs={"State": {"type": "string", "enum": list(values), "title": "State"}},
        )

    narrowed = diff_tool(state("open", "closed", "all"), state("open", "closed"))
    assert kinds(narrowed) == {("input_enum_narrowed", "state", True)}
    assert '"all"' in narrowed[0].detail
    widened = diff_tool(state("open", "closed"), state("open", "closed", "all"))
    assert kinds(widened) == {("input_enum_widened", "state", False)}


def test_input_bounds_tightened_break_and_loosened_do_not():
    old = tool(
        "t", {"per_page": {"type": "integer", "maximum": 100, "minimum": 1}, "q": {"type": "string", "maxLength": 256}}
    )
    new = tool(
        "t", {"per_page": {"type": "integer", "maximum": 50, "minimum": 1}, "q": {"type": "string", "maxLength": 1024}}
    )
    changes = diff_tool(old, new)
    assert kinds(changes) == {("input_bound_tightened", "per_page", True), ("input_bound_loosened", "q", False)}
    assert "maximum lowered from 100 to 50" in only(changes, "input_bound_tightened").detail
    added = diff_tool(tool("t", {"q": STR}), tool("t", {"q": {"type": "string", "minLength": 3}}))
    assert kinds(added) == {("input_bound_tightened", "q", True)}


def test_nested_body_model_is_walked_with_dotted_paths():
    def body(owner_props, owner_required):
        defs = {
            "Owner": model(owner_props, owner_required, title="Owner"),
            "Body": model({"owner": {"$ref": "#/$defs/Owner"}, "name": STR}, ["owner"], title="Body"),
        }
        return tool("t", {"body": {"$ref": "#/$defs/Body"}}, ["body"], defs=defs)

    changes = diff_tool(
        body({"login": STR, "id": INT}, ["login"]), body({"login": STR, "id": STR, "team": STR}, ["login", "team"])
    )
    assert kinds(changes) == {
        ("input_type_changed", "body.owner.id", True),
        ("input_required_added", "body.owner.team", True),
    }


def test_input_default_change_is_reported_as_compatible():
    changes = diff_tool(
        tool("t", {"n": {"type": "integer", "default": 3}}), tool("t", {"n": {"type": "integer", "default": 5}})
    )
    assert kinds(changes) == {("input_default_changed", "n", False)}


def test_closing_input_object_is_breaking():
    old = tool("t", {"body": model({"a": STR})})
    new = tool("t", {"body": {**model({"a": STR}), "additionalProperties": False}})
    assert kinds(diff_tool(old, new)) == {("input_additional_properties_changed", "body", True)}


# --- outputs ---------------------------------------------------------------------------------------


def user_output(properties: dict, required=(), **extra) -> dict:
    """`result: list[User]`, with User in $defs, as pydantic writes a list response."""
    return wrapped(
        {"type": "array", "items": {"$ref": "#/$defs/User"}},
        {"User": model(properties, required, title="User", **extra)},
    )


def test_output_field_changes_inside_array_items():
    old = tool("t", output=user_output({"id": INT, "login": STR, "bio": STR, "site": STR}, ["id", "login"]))
    new = tool("t", output=user_output({"id": STR, "login": STR, "site": STR, "email": STR}, ["id", "site"]))
    changes = diff_tool(old, new)
    assert kinds(changes) == {
        ("output_type_changed", "result[].id", True),
        ("output_field_removed", "result[].bio", True),
        ("output_field_added", "result[].email", False),
        ("output_became_optional", "result[].login", True),
        ("output_became_required", "result[].site", False),
    }


def test_output_becoming_nullable_is_breaking():
    changes = diff_tool(tool("t", output=wrapped({"type": "string"})), tool("t", output=wrapped(NULLABLE_STR)))
    change = only(changes, "output_type_changed", "result")
    assert change.breaking and "null" in change.detail


def test_output_enum_widened_breaks_and_narrowed_does_not():
    def out(*values):
        return tool(
            "t",
            output=wrapped(
                {"anyOf": [{"$ref": "#/$defs/S"}, {"type": "null"}]}, {"S": {"type": "string", "enum": list(values)}}
            ),
        )

    assert kinds(diff_tool(out("a", "b"), out("a", "b", "c"))) == {("output_enum_widened", "result", True)}
    assert kinds(diff_tool(out("a", "b", "c"), out("a", "b"))) == {("output_enum_narrowed", "result", False)}


def test_output_bounds_are_the_mirror_of_input_bounds():
    old = tool("t", output=wrapped({"type": "string", "maxLength": 10}))
    new = tool("t", output=wrapped({"type": "string", "maxLength": 20}))
    assert kinds(diff_tool(old, new)) == {("output_bound_loosened", "result", True)}
    assert kinds(diff_tool(new, old)) == {("output_bound_tightened", "result", False)}


def test_output_schema_added_and_removed():
    with_out, without = tool("t", output=wrapped(INT)), tool("t")
    assert kinds(diff_tool(with_out, without)) == {("output_schema_removed", "", True)}
    assert kinds(diff_tool(without, with_out)) == {("output_schema_added", "", False)}


def test_closing_an_open_output_is_breaking():
    old = tool("t", output=model({"a": STR}))
    new = tool("t", output={**model({"a": STR}), "additionalProperties": False})
    assert kinds(diff_tool(old, new)) == {("output_additional_properties_changed", "", True)}
    assert kinds(diff_tool(new, old)) == {("output_additional_properties_changed", "", False)}


def test_map_output_values_are_walked():
    old = tool("t", output={"type": "object", "additionalProperties": {"type": "integer"}})
    new = tool("t", output={"type": "object", "additionalProperties": {"type": "number"}})
    assert kinds(diff_tool(old, new)) == {("output_type_changed", "{}", True)}


# --- prose and annotations -------------------------------------------------------------------------


def test_descriptions_titles_and_safer_annotations_are_compatible():
    old = tool("t", {"q": {"type": "string", "description": "Query"}}, annotations={"destructiveHint": True})
    new = tool(
        "t",
        {"q": {"type": "string", "description": "Search query"}},
        title="T",
        description="Changed.",
        annotations={"readOnlyHint": False, "destructiveHint": False, "idempotentHint": True},
    )
    changes = diff_tool(old, new)
    assert kinds(changes) == {
        ("title_changed", "", False),
        ("description_changed", "", False),
        ("annotations_changed", "", False),
        ("input_description_changed", "q", False),
    }
    detail = only(changes, "annotations_changed").detail
    assert "destructiveHint true -> false" in detail and "idempotentHint unset -> true" in detail
    assert not has_breaking(changes)


@pytest.mark.parametrize(
    ("old", "new", "kind"),
    [
        # A PUT tool regenerated by a typed-mcp that knows PUT replaces: clients must now confirm.
        (
            {"readOnlyHint": False, "destructiveHint": False},
            {"readOnlyHint": False, "destructiveHint": True},
            "became_destructive",
        ),
        # A hint left out means destructive (MCP's default).
        ({"readOnlyHint": False, "destructiveHint": False}, {"readOnlyHint": False}, "became_destructive"),
        (
            {"readOnlyHint": True, "destructiveHint": False},
            {"readOnlyHint": False, "destructiveHint": True},
            "became_destructive",
        ),
        # No longer read-only, not destructive: `--read-only` servers drop it.
        (
            {"readOnlyHint": True, "destructiveHint": False},
            {"readOnlyHint": False, "destructiveHint": False},
            "no_longer_read_only",
        ),
    ],
)
def test_a_tool_that_becomes_destructive_or_stops_reading_only_is_breaking(old, new, kind):
    changes = diff_tool(tool("t", annotations=old), tool("t", annotations=new))
    assert kinds(changes) == {(kind, "", True)}
    assert has_breaking(changes)
    # The other way round it is safer: compatible.
    assert kinds(diff_tool(tool("t", annotations=new), tool("t", annotations=old))) == {
        ("annotations_changed", "", False)
    }


# --- recursion -------------------------------------------------------------------------------------


def tree_tool(node_props: dict) -> dict:
    node = model(
        {
            "name": STR,
            "children": {"type": "array", "items": {"$ref": "#/$defs/Node"}},
            "parent": {"anyOf": [{"$ref": "#/$defs/Node"}, {"type": "null"}]},
            **node_props,
        },
        ["name"],
    )
    return tool(
        "t",
        {"root": {"$ref": "#/$defs/Node"}},
        ["root"],
        output=wrapped({"$ref": "#/$defs/Node"}, {"Node": node}),
        defs={"Node": node},
    )


def test_recursive_defs_terminate_and_still_report_changes():
    changes = diff_tool(tree_tool({"size": INT}), tree_tool({"size": STR}))
    assert kinds(changes) == {("input_type_changed", "root.size", True), ("output_type_changed", "result.size", True)}


def test_self_referencing_ref_chains_do_not_loop():
    def looping(extra):
        defs = {"A": {"$ref": "#/$defs/B"}, "B": {"$ref": "#/$defs/A"}, "C": {"anyOf": [{"$ref": "#/$defs/C"}, extra]}}
        return tool("t", {"a": {"$ref": "#/$defs/A"}, "c": {"$ref": "#/$defs/C"}}, defs=defs)

    changes = diff_tool(looping(INT), looping(STR))  # must return, whatever it concludes
    assert all(c.path in ("a", "c") for c in changes)


# --- determinism and reports -----------------------------------------------------------------------


def mixed_pair() -> tuple[dict, dict]:
    old = catalog(
        tool(
            "list_issues",
            {"state": {"type": "string", "enum": ["open", "closed"]}, "page": INT},
            output=wrapped({"type": "array", "items": model({"id": INT, "title": STR}, ["id"])}),
        ),
        tool("delete_repo", {"repo": STR}, ["repo"]),
        tool("get_user", {"login": STR}, ["login"], output=model({"login": STR}, ["login"])),
    )
    new = catalog(
        tool("get_user", {"login": STR}, ["login"], output=model({"login": STR, "bio": STR}, ["login"])),
        tool(
            "list_issues",
            {"state": {"type": "string", "enum": ["open"]}, "page": INT, "q": STR},
            output=wrapped({"type": "array", "items": model({"id": STR, "title": STR}, ["id"])}),
        ),
        tool("search", {"q": STR}, ["q"]),
    )
    return old, new


def test_order_is_deterministic_and_independent_of_tool_order():
    old, new = mixed_pair()
    first = render_json(diff_catalogs(old, new))
    assert first == render_json(diff_catalogs(old, new))
    shuffled = diff_catalogs({"tools": old["tools"][::-1]}, {"tools": new["tools"][::-1]})
    assert render_json(shuffled) == first
    changes = diff_catalogs(old, new)
    assert changes == sorted(changes, key=lambda c: (c.tool, c.path, c.kind, c.detail))


def test_summary_and_json_report():
    old, new = mixed_pair()
    changes = diff_catalogs(old, new)
    counts = summarize(changes)
    assert counts == {
        "tools_added": 1,
        "tools_removed": 1,
        "tools_renamed": 0,
        "tools_changed": 2,
        "breaking": 3,
        "compatible": 3,
        "total": 6,
    }
    text = render_json(changes)
    assert text.endswith("\n")
    payload = json.loads(text)
    assert list(payload) == ["summary", "breaking", "changes"]
    assert payload["breaking"] is True and payload["summary"] == counts
    assert list(payload["changes"][0]) == ["kind", "tool", "path", "breaking", "detail"]


def test_text_and_markdown_put_breaking_first_with_counts():
    old, new = mixed_pair()
    changes = diff_catalogs(old, new)
    text = render_text(changes)
    assert text.startswith("3 breaking, 3 compatible change(s); tools: 1 added, 1 removed, 0 renamed, 2 changed.")
    assert text.index("Breaking:") < text.index("Compatible:")
    assert text.index("delete_repo") < text.index("Compatible:") < text.index("search")

    md = render_markdown(changes)
    assert md.startswith("## ")
    assert "**3 breaking, 3 compatible" in md
    assert md.index("### Breaking (3)") < md.index("### Compatible (3)")
    assert "| `list_issues` | `result[].id` | `output_type_changed` |" in md
    breaking_rows = md[md.index("### Breaking") : md.index("### Compatible")]
    assert "`input_enum_narrowed`" in breaking_rows and "`tool_added`" not in breaking_rows


def test_markdown_escapes_table_breaking_characters():
    change = Change("input_removed", "t", "a|b", True, "Argument 'a|b' was\nremoved.")
    md = render_markdown([change])
    assert "`a\\|b`" in md and "was removed." in md
