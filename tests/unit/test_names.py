"""Tool and argument names: readable, `[a-z0-9_]`, at most 64 characters, unique, stable."""

from __future__ import annotations

import json
import random
import re
import time

import pytest

from support import run_cli
from typed_mcp import names
from typed_mcp.errors import SpecError

VALID = re.compile(r"^[a-z][a-z0-9_]{0,63}$")
HASH = re.compile(r"_[0-9a-f]{8}$")


def test_snake_case():
    assert names.snake_case("repos/get") == "repos_get"
    assert names.snake_case("getUserByID") == "get_user_by_id"
    assert names.snake_case("List Pets!") == "list_pets"
    assert names.snake_case("HTTPServerError") == "http_server_error"
    assert names.snake_case("actions/get-artifact") == "actions_get_artifact"
    assert names.snake_case("ünïcödé Straße") == "unicode_strae"


def test_base_names():
    assert names.base_tool_name("repos/get", "get", "/repos/{owner}/{repo}") == "repos_get"
    assert names.base_tool_name(None, "get", "/v1/weather/{city}") == "get_v1_weather_city"
    assert names.base_tool_name("123go", "get", "/x") == "op_123go"
    assert names.base_tool_name("!!!", "post", "/") == "post"


@pytest.mark.parametrize(
    ("operation_id", "method", "path", "expected"),
    [
        # Written as one word (OpenAI's and Zoom's specs): split into a verb and the path's own words.
        ("Updateorganizationspendlimit", "POST", "/organization/spend_limit", "update_organization_spend_limit"),
        ("Createcontentprovenancecheck", "POST", "/content_provenance_checks", "create_content_provenance_check"),
        ("sendimmessages", "POST", "/im/users/me/chat/messages", "send_im_messages"),
        ("meetingregistrantdelete", "DELETE", "/meetings/{meetingId}/registrants/{id}", "meeting_registrant_delete"),
        # One word that is one word, or that those words do not spell ("counts"): as it is.
        ("notifications", "GET", "/notifications", "notifications"),
        ("Getinputtokencounts", "POST", "/responses/input_tokens", "getinputtokencounts"),
        ("getaccountinfo", "GET", "/account/info", "get_account_info"),
        ("listpets", "GET", "/pets", "listpets"),  # under 12 characters: left alone (a word may be one)
    ],
)
def test_an_operation_id_written_as_one_word_is_split_into_its_paths_words(operation_id, method, path, expected):
    assert names.base_tool_name(operation_id, method, path) == expected


@pytest.mark.parametrize(
    ("operation_id", "path", "summary", "expected"),
    [
        # Words run together that the summary says apart (OpenAI's and Zoom's specs).
        ("Getinputtokencounts", "/responses/input_tokens", "Returns input token counts.", "get_input_token_counts"),
        (
            "CreateanAPIkeyforaserviceaccount",
            "/organization/projects/{project_id}/service_accounts/{service_account_id}/api_keys",
            "Creates an API key for a service account in the project.",
            "create_an_api_key_for_a_service_account",
        ),
        ("compactconversation", "/responses/compact", "Compact a conversation.", "compact_conversation"),
        ("trackingfield_list", "/tracking_fields", "List tracking fields on your account.", "tracking_field_list"),
        # A camelCase word of the summary is its words ("groupId": group, id).
        (
            "get_subscriptionbygroup_id",
            "/subscriptions/{id}",
            "Get Subscription by groupId",
            "get_subscription_by_group_id",
        ),
        # A summary that is an identifier, not prose, spells nothing ("Blockcha", "Ininfo").
        ("getblockchaininfo", "/blockchain", "getBlockchaIninfo", "getblockchaininfo"),
        # Split already (camelCase), or not spelled by those words, or no summary: as it is, never
        # fewer words (the path's one word `initializerconfigurations` would spell two).
        (
            "listInitializerConfiguration",
            "/apis/v1alpha1/initializerconfigurations",
            "list or watch objects of kind InitializerConfiguration",
            "listInitializerConfiguration",
        ),
        ("getquarterlyforecastsummary", "/forecasts", "Get a forecast.", "getquarterlyforecastsummary"),
        ("Getinputtokencounts", "/responses/input_tokens", None, "Getinputtokencounts"),
        ("repos/create-fork", "/repos/{owner}/{repo}/forks", "Create a fork", "repos/create-fork"),
    ],
)
def test_an_operation_id_running_words_together_is_spelled_with_its_summarys_words(
    operation_id, path, summary, expected
):
    assert names.spelled(operation_id, path, summary) == expected


def test_long_names_are_shortened_readably_without_a_hash():
    """Filler words, short forms and words said twice (`app` after `apps`) go; no other word, even where
    the name stays over 40."""
    long_id = "apps/list-installation-requests-for-authenticated-app-with-a-very-long-suffix-indeed"
    pairs = [
        ("GET /a", names.base_tool_name(long_id, "get", "/a")),
        ("GET /b", names.base_tool_name("apps/list-installation-requests-for-the-organization-app", "get", "/b")),
    ]
    result = names.unique_tool_names(pairs)
    assert result == {
        "GET /a": "apps_list_installation_requests_auth_very_long_suffix_indeed",  # over 40, every word
        "GET /b": "apps_list_installation_requests_org_app",
    }
    assert result == names.unique_tool_names(list(reversed(pairs)))  # not by order of appearance


def test_a_name_past_the_limit_loses_its_last_words_only():
    long_id = "create-or-update-the-enterprise-security-classification-template-schema-for-a-folder-item"
    result = names.unique_tool_names([("PUT /a", names.tool_name_candidates(long_id, "put", "/a"))])
    assert result == {"PUT /a": "create_or_update_enterprise_security_classification_template"}
    assert len(result["PUT /a"]) <= names.MAX_TOOL_NAME


def test_identical_long_names_fall_back_to_a_stable_hash():
    pairs = [("GET /a", "x" * 70), ("GET /b", "x" * 70)]
    result = names.unique_tool_names(pairs)
    assert len(set(result.values())) == 2 and all(VALID.match(n) and HASH.search(n) for n in result.values())
    assert all(len(n) <= names.MAX_TOOL_NAME for n in result.values())
    assert result == names.unique_tool_names(list(reversed(pairs)))


def test_route_suffix_of_generated_operation_ids_is_stripped():
    # FastAPI's default `generate_unique_id`: `{function}{path}_{method}` with non-word characters as `_`.
    assert names.base_tool_name("read_flow_flows__id__get", "get", "/flows/{id}") == "read_flow"
    assert (
        names.base_tool_name(
            "create_flow_run_deployments__id__create_flow_run_post", "post", "/deployments/{id}/create_flow_run"
        )
        == "create_flow_run"
    )
    assert names.base_tool_name("getUserUsersUserIdGet", "get", "/users/{userId}") == "get_user"
    # Nothing before the suffix: the name is the path itself, kept.
    assert names.base_tool_name("flows_id_get", "get", "/flows/{id}") == "flows_id_get"
    assert names.base_tool_name("read_flow", "get", "/flows/{id}") == "read_flow"


def choices(*routes: tuple[str, str, str]) -> dict[str, str]:
    """(operationId, method, path) -> the names `unique_tool_names` settles on, by `METHOD /path`."""
    return names.unique_tool_names(
        names.tool_name_choices(
            (f"{method.upper()} {path}", op_id, method, path) for op_id, method, path in routes
        ).items()
    )


def test_same_function_on_two_routes_says_the_scope_that_differs():
    result = choices(
        ("read_flow_flows__id__get", "get", "/flows/{id}"),
        ("read_flow_ui_flows__id__get", "get", "/ui/flows/{id}"),
        ("read_runs_runs_get", "get", "/runs"),
    )
    assert result == {"GET /flows/{id}": "read_flow", "GET /ui/flows/{id}": "read_ui_flow", "GET /runs": "read_runs"}
    # Three routes, each in its own scope: each says its own, none the words all share.
    result = choices(
        ("list_runs_api_v1_runs_get", "get", "/api/v1/runs"),
        ("list_runs_api_v1_projects__project_id__runs_get", "get", "/api/v1/projects/{project_id}/runs"),
        ("list_runs_api_v1_pipelines__id__runs_get", "get", "/api/v1/pipelines/{id}/runs"),
    )
    assert result == {
        "GET /api/v1/runs": "list_runs",
        "GET /api/v1/projects/{project_id}/runs": "list_project_runs",
        "GET /api/v1/pipelines/{id}/runs": "list_pipeline_runs",
    }
    # Both name a project: the collection tells them apart; and in any order.
    routes = [
        ("list_runs_workspaces__project_id__runs_get", "get", "/workspaces/{project_id}/runs"),
        ("list_runs_projects__project_id__runs_get", "get", "/projects/{project_id}/runs"),
        ("list_runs_runs_get", "get", "/runs"),
    ]
    result = choices(*routes)
    assert result == {
        "GET /workspaces/{project_id}/runs": "list_workspace_runs",
        "GET /projects/{project_id}/runs": "list_project_runs",
        "GET /runs": "list_runs",
    }
    for seed in range(5):
        random.Random(seed).shuffle(routes)
        assert choices(*routes) == result


def test_route_scopes():
    scopes = names.route_scopes("/api/v1/workspaces/{project_name_or_id}/runs")
    assert [s.words for s in scopes] == [("api",), ("v1",), ("project",), ("runs",)]
    assert scopes[2].collection == ("workspaces",)
    assert [s.words for s in names.route_scopes("/flows/{id}/runs/{run_id}")] == [("flow",), ("run",)]
    assert [s.words for s in names.route_scopes("/work_pools/{work_pool_name}/queues")] == [
        ("work", "pool"),
        ("queues",),
    ]


def test_path_spelled_names_drop_their_variables():
    candidates = names.tool_name_candidates(
        "getV3ProjectsIdIssuesIssueIdNotesNoteIdAwardEmoji",
        "get",
        "/v3/projects/{id}/issues/{issue_id}/notes/{note_id}/award_emoji",
    )
    assert "get_projects_issues_notes_award_emoji" in candidates
    assert "get_projects_issues_notes_award_emoji_id" in names.tool_name_candidates(
        None, "get", "/v3/projects/{id}/issues/{issue_id}/notes/{note_id}/award_emoji/{award_id}"
    )


def test_collisions_resolved_independently_of_order():
    pairs = [("GET /users", "get_user"), ("POST /getUser", "get_user"), ("GET /x", "other")]
    first = names.unique_tool_names(pairs)
    for _ in range(5):
        shuffled = pairs[:]
        random.shuffle(shuffled)
        assert names.unique_tool_names(shuffled) == first
    assert first["GET /x"] == "other"
    assert len(set(first.values())) == 3 and all(VALID.match(n) for n in first.values())
    # Adding an unrelated operation never renames existing tools.
    assert names.unique_tool_names(pairs + [("GET /new", "brand_new")])["GET /users"] == first["GET /users"]


def test_argument_names():
    assert names.argument_name("X-Request-ID") == "x_request_id"
    assert names.argument_name("class") == "class_"
    assert names.argument_name("id") == "id"  # a builtin is fine as a parameter
    assert names.argument_name("api") == "api_"  # the function body calls `api`
    assert names.argument_name("model_config") == "model_config_"
    assert names.argument_name("2fa") == "p_2fa"
    unique = names.unique_argument_names([("id", "path", "id"), ("id", "query", "id"), ("name", "query", "name")])
    assert unique == {("id", "path"): "id_path", ("id", "query"): "id_query", ("name", "query"): "name"}


def test_python_function_names_avoid_builtins_and_keywords():
    assert names.python_name("list") == "list_"
    assert names.python_name("import") == "import_"
    assert names.python_name("repos_get") == "repos_get"


def test_default_package_names_are_short_and_keep_brands():
    from typed_mcp.pipeline import package_names

    assert package_names(None, "GitHub's official OpenAPI spec + Octokit extension") == (
        "github-octokit-mcp",
        "github_octokit_mcp",
    )
    assert package_names(None, "Weather API") == ("weather-mcp", "weather_mcp")
    assert package_names(None, "OpenAI API")[0] == "openai-mcp"
    assert package_names(None, "Netlify\u2019s API documentation")[0] == "netlify-mcp"
    assert package_names(None, "VirtualWANAsAServiceManagementClient")[0] == "virtual-wan-management-mcp"
    assert package_names(None, "Swagger Petstore")[0] == "petstore-mcp"
    assert package_names(None, "Spotify Web API v1")[0] == "spotify-mcp"
    assert (
        package_names(None, "Google Cloud Storage Bucket Admin API")[0] == "google-cloud-storage-mcp"
    )  # at most 3 words
    assert package_names(None, "Web3 API")[0] == "web3-mcp"
    assert package_names("custom-name", "Weather API") == ("custom-name", "custom_name")
    assert package_names("custom-name", "FastAPI") == ("custom-name", "custom_name")  # given: never refused


@pytest.mark.parametrize(
    "title",
    [
        "FastAPI",  # FastAPI's default: the spec of dstack, and of most FastAPI apps
        "NinjaAPI",  # Django Ninja's
        "APIFlask",  # APIFlask's
        "Litestar API",
        "LoopBack Application",
        "WebApplication1",  # .NET's project template
        "OpenAPI definition",  # springdoc's
        "A swagger API",  # flasgger's
        "API",
        "API V1",
        "REST API",
        "OpenAPI",
        "Swagger",
        "My API",
        "Untitled",
        "Sample API",
        "The API",
        "",
        "!!!",
    ],
)
def test_a_title_that_names_no_api_is_refused(title):
    from typed_mcp.pipeline import package_names

    assert names.generic_title(title)
    with pytest.raises(SpecError, match=r"names no API .*give --package-name NAME") as refused:
        package_names(None, title, "spec.json")
    assert str(refused.value).startswith("spec.json: #/info/title: the title")


def test_tool_prefix():
    assert names.tool_prefix("") == ""
    assert names.tool_prefix("gh") == names.tool_prefix("gh_") == names.tool_prefix("GH-") == "gh_"
    for bad in ("1x", "x" * 30):
        with pytest.raises(SpecError, match="tool prefix"):
            names.tool_prefix(bad)


@pytest.mark.slow  # runs the CLI
def test_generate_and_init_refuse_a_framework_default_title_in_one_line(tmp_path):
    """dstack's spec is titled `FastAPI`: the default package would have been `fastapi-mcp`, an
    unrelated PyPI project its README would tell users to run. Refused before anything is written;
    `--package-name` makes it work."""
    spec = tmp_path / "openapi.json"
    spec.write_text(
        json.dumps(
            {
                "openapi": "3.1.0",
                "info": {"title": "FastAPI", "version": "0.1.0"},
                "paths": {
                    "/api/runs/list": {
                        "post": {"operationId": "list_runs", "responses": {"200": {"description": "OK"}}}
                    }
                },
            }
        )
    )
    out = tmp_path / "out"
    refused = run_cli("generate", str(spec), "--out", str(out), "--no-snapshot", "--no-verify")
    lines = refused.stderr.strip().splitlines()
    assert refused.returncode == 1 and len(lines) == 1, refused.stderr
    assert lines[0] == (
        f"error: {spec}: #/info/title: the title 'FastAPI' names no API (a framework's default or a placeholder),"
        " so the package would be fastapi-mcp: give --package-name NAME (or package_name in the config)"
    )
    assert not out.exists()
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "openapi.json").write_bytes(spec.read_bytes())  # a config names spec files inside its repository
    refused = run_cli("init", "openapi.json", "--dir", str(repo), cwd=repo)
    assert (
        refused.returncode == 1 and "names no API" in refused.stderr and len(refused.stderr.strip().splitlines()) == 1
    )
    assert [p.name for p in repo.iterdir()] == ["openapi.json"]
    made = run_cli(
        "generate", str(spec), "--out", str(out), "--no-snapshot", "--no-verify", "--package-name", "dstack-mcp"
    )
    assert made.returncode == 0, made.stderr
    assert json.loads((out / "typed-mcp.json").read_text())["package"] == "dstack-mcp"


def test_the_plan_names_a_tool_by_its_spelled_operation_id(tmp_path):
    """The planner gives the summary (else the description's first sentence) to `names.spelled`."""
    from typed_mcp.plan.build import plan
    from typed_mcp.plan.curation import Curation
    from typed_mcp.spec.load import load
    from typed_mcp.spec.normalize import normalize

    ok = {"200": {"description": "ok"}}
    spec = {
        "openapi": "3.0.3",
        "info": {"title": "Tokens", "version": "1"},
        "paths": {
            "/responses/input_tokens": {
                "post": {
                    "operationId": "Getinputtokencounts",
                    "summary": "Returns input token counts.",
                    "responses": ok,
                }
            },
            "/responses/compact": {
                "post": {
                    "operationId": "compactconversation",
                    "description": "Compact a conversation.",
                    "responses": ok,
                }
            },
        },
    }
    source = tmp_path / "tokens.json"
    source.write_text(json.dumps(spec))
    api = plan(normalize(load(str(source))), package_name="tokens", module="tokens", curation=Curation(None, []))
    assert sorted(op.tool_name for op in api.operations) == ["compact_conversation", "get_input_token_counts"]
    assert {op.operation_id for op in api.operations} == {"Getinputtokencounts", "compactconversation"}


def test_a_huge_operation_id_is_named_in_bounded_time():
    """Spec text is untrusted: an operationId of 100,000 characters that its path's and summary's words
    could spell is left as it is, at once (spelling it kept a list per prefix: 28 s an operation, so a
    spec of a few such operations stalled generation for minutes). The deadline is about a hang."""
    huge = "get" + "ab" * 50_000
    started = time.perf_counter()
    for _ in range(3):
        assert names.base_tool_name(huge, "get", "/ab").startswith("getabab")
        assert names.spelled(huge, "/ab", "get ab ab") == huge
    assert time.perf_counter() - started < 10


def test_operations_sharing_a_name_on_deep_paths_are_named_in_bounded_time():
    """Spec text is untrusted: three operations sharing an operationId, on paths of 300 scopes each,
    once tried every combination of up to three of their scopes (4.5 million names each, each checked
    against all before it: generation ran for over five minutes). The deadline is about a hang."""

    def deep(prefix: str) -> str:
        return "/" + "/".join(f"{prefix}{i}/{{p{i}}}" for i in range(300))

    operations = [(f"GET {deep(f'r{k}x')}", "list_runs", "get", deep(f"r{k}x")) for k in range(3)]
    started = time.perf_counter()
    names_ = names.unique_tool_names(names.tool_name_choices(operations).items())
    assert time.perf_counter() - started < 30
    assert sorted(names_.values()) == ["list_runs_r0x0", "list_runs_r1x0", "list_runs_r2x0"]
