"""Step 5: render the package's files from the IR with jinja2.

Spec text is untrusted. It reaches generated files only through the filters defined here:
`py` (a Python literal via `repr`), `docstring` (an escaped triple-quoted string), `toml`, `yaml` and `md`.
Identifiers come from `names`, type expressions from `plan.parameters.python_type` and the model step.
Decisions live in the view functions below; the templates only lay text out.
"""

from __future__ import annotations

import ast
import functools
import itertools
import json
import math
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import jinja2

from typed_mcp import __version__, children, guard, names
from typed_mcp.errors import OutputError, SpecError
from typed_mcp.models.build import Models
from typed_mcp.plan.ir import ApiPlan, Operation, Table
from typed_mcp.profile import Profile
from typed_mcp.pysource import UNPRINTABLE, escape_unprintable
from typed_mcp.render.clients import client_setups
from typed_mcp.render.registry import icons
from typed_mcp.render.search import Browse, browse_toolsets, search_documents
from typed_mcp.render.semantic import semantic_files
from typed_mcp.render.views import table_views
from typed_mcp.resources import runtime_dir, templates_dir
from typed_mcp.runtime import contracts

# The MCP SDK minor the generated server is tested with (it uses only the SDK's public API, but a
# new minor may still change behaviour): generated packages pin it, `~=` allowing patch releases.
MCP_REQUIREMENT = "mcp~=2.3.0"
# The generated Dockerfile's base image: slim, with a pinned tag, the Python of the locked toolchain.
DOCKER_BASE = "python:3.11.13-slim-bookworm"
_TYPING_NAMES = {"Annotated", "Any", "Literal"}
_BUILTINS = {"list", "dict", "str", "int", "float", "bool", "None", "bytes", "set", "tuple", "object"}


# --- escaping filters ------------------------------------------------------------------------------


def py_literal(value: Any) -> str:
    """A Python literal for a JSON value. `repr` of str/int/float/bool/None/list/dict is always a
    literal, never code; non-finite floats (which JSON cannot hold anyway) are refused."""
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError("non-finite number")
    if isinstance(value, tuple):
        return "(" + "".join(py_literal(v) + ", " for v in value).rstrip(" ") + ")"
    if isinstance(value, list):
        return "[" + ", ".join(py_literal(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{py_literal(str(k))}: {py_literal(v)}" for k, v in value.items()) + "}"
    if value is None or isinstance(value, (str, int, float, bool)):
        return repr(value)
    raise ValueError(f"not a JSON value: {type(value).__name__}")


def docstring(text: str, indent: str = "    ") -> str:
    """A triple-quoted docstring holding `text` exactly: backslashes and quotes escaped, control
    characters as escapes, so nothing in it can end the string early."""
    body = escape_unprintable(text.replace("\\", "\\\\").replace('"', '\\"'))
    lines = body.split("\n")
    if len(lines) == 1:
        return f'"""{body}"""'
    return (
        '"""'
        + "\n".join((indent + line) if line.strip() and i else line for i, line in enumerate(lines))
        + "\n"
        + indent
        + '"""'
    )


def yaml_string(value: str) -> str:
    """A YAML double-quoted scalar holding `value` exactly (JSON's string syntax, all ASCII, is YAML's)."""
    return json.dumps(value, ensure_ascii=True)


def toml_string(text: str) -> str:
    escaped = json.dumps(text, ensure_ascii=False)
    return UNPRINTABLE.sub(lambda m: f"\\u{ord(m.group()):04x}", escaped)


# The MCP Registry takes `mcp-name: NAME` anywhere in a PyPI package's README as proof that the package
# belongs to the registry entry NAME: spec text must never write one (it is matched case-sensitively;
# the escaped hyphen renders the same).
_OWNERSHIP_MARKER = re.compile(r"(mcp)-(name:)", re.IGNORECASE)


def markdown(text: str) -> str:
    """Inline Markdown: one line, HTML and table pipes neutralized, no link or image (`[..](..)`,
    `![..](..)`, `[..]: ..` definitions): brackets are escaped, backslashes first so none can undo it;
    and no MCP Registry ownership marker (`mcp-name:`)."""
    text = " ".join(text.split()).replace("\\", "\\\\")
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("|", "\\|").replace("`", "\\`")
    text = _OWNERSHIP_MARKER.sub(r"\1\\-\2", text)
    return text.replace("[", "\\[").replace("]", "\\]")


def templates() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(templates_dir())),
        undefined=jinja2.StrictUndefined,
        autoescape=False,  # noqa: S701 - output is Python/TOML/Markdown; escaping is done by the filters
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters.update(py=py_literal, docstring=docstring, toml=toml_string, md=markdown, yaml=yaml_string)
    return env


# --- views: everything the templates print, decided here -----------------------------------------------


@dataclass(frozen=True)
class ToolView:
    op: Operation
    signature: list[str]  # "name: Annotation = default"
    returns: str  # the return annotation
    call_args: list[str]  # keyword arguments of api.call(...), already rendered
    structured: bool
    wrapped: bool = False  # structuredContent is {"result": <the answer>}
    call: str = "api.call"  # the runtime function the tool returns the result of


def _field(annotation: str, description: str | None, constraints: tuple[tuple[str, Any], ...] = ()) -> str:
    args = [f"description={py_literal(description)}"] if description else []
    args += [f"{key}={py_literal(value)}" for key, value in constraints]
    return f"Annotated[{annotation}, Field({', '.join(args)})]" if args else annotation


def tool_view(op: Operation, models: Models, table: Table | None = None, data_tools: bool = False) -> ToolView:
    """The tool's view; `data_tools`: the data-tool profile (`_runtime/datatools.py`), where `table`
    (keys from the answer to its rows, columns) is the answer's table, if any."""
    view = _tool_view(op, models)
    if not data_tools:
        return view
    call = ["api", *(arg for arg in view.call_args if arg != "wrap=True")]
    inner = view.returns.removeprefix("Annotated[CallToolResult, ").removesuffix("]") if view.structured else None
    if inner is None:  # no outputSchema of its own: data is the JSON as it came (text policy) or null
        inner = "JsonValue" if any(arg.startswith("returns=") for arg in call) else "None"
    if table is not None:
        call.append(f"table={py_literal((list(table[0]), list(table[1])))}")
    returns = f"Annotated[CallToolResult, DataResult[{inner}]]"
    return replace(view, returns=returns, call_args=call, structured=True, call="data_call")


def _tool_view(op: Operation, models: Models) -> ToolView:
    required: list[str] = []
    optional: list[str] = []
    for param in op.parameters:
        annotation = _field(param.annotation, param.description, param.constraints)
        if param.required and not param.has_default:
            required.append(f"{param.arg_name}: {annotation}")
        else:
            optional.append(f"{param.arg_name}: {annotation} = {py_literal(param.default)}")
    if op.body is not None:
        body_type = models.annotation(op.body.schema_key) if op.body.schema_key else "str"
        if op.body.encoding == "base64":  # raw bytes: base64 text, or a file the server reads (`_runtime/files.py`)
            body_type = "str | FileReference"
        extra: tuple[tuple[str, Any], ...] = ()
        if op.body.base64_argument:  # say so in the inputSchema, for clients and models alike
            extra = (("json_schema_extra", {"contentEncoding": "base64", "contentMediaType": op.body.media_type}),)
        if op.body.required:
            required.append(f"{op.body.arg_name}: {_field(body_type, op.body.description, extra)}")
        else:
            optional.append(f"{op.body.arg_name}: {_field(body_type + ' | None', op.body.description, extra)} = None")

    by_location: dict[str, list[str]] = {"path": [], "query": [], "header": [], "cookie": []}
    styles = []
    for param in op.parameters:
        by_location[param.location].append(f"{py_literal(param.wire_name)}: {param.arg_name}")
        if param.style is not None or param.explode is not None:
            styles.append(f"{py_literal(param.wire_name)}: ({py_literal(param.style)}, {py_literal(param.explode)})")
    call = [py_literal(op.method), py_literal(op.path)]
    by_location["query"][:0] = [f"{py_literal(name)}: {py_literal(value)}" for name, value in op.fixed_query]
    for location, keyword in (
        ("path", "path_params"),
        ("query", "query"),
        ("header", "headers"),
        ("cookie", "cookies"),
    ):
        if by_location[location]:
            call.append(f"{keyword}={{{', '.join(by_location[location])}}}")
    if styles:
        call.append(f"styles={{{', '.join(styles)}}}")
    if op.body is not None:
        call.append(f"{op.body.encoding}_body={op.body.arg_name}")
        if op.body.encoding in ("text", "base64"):
            call.append(f"content_type={py_literal(op.body.media_type)}")
        if op.body.file_fields:
            call.append(f"file_fields={py_literal(op.body.file_fields)}")
    if op.security:
        call.append(f"security={py_literal(op.security)}")
    if op.credentials_required:
        call.append("credentials_required=True")
    response = op.response
    if response.media_type:
        # A JSON response the spec files under */* is still asked for as JSON first.
        accept = (
            "application/json, */*;q=0.5"
            if response.kind == "json" and response.media_type == "*/*"
            else response.media_type
        )
        if response.json_also:
            accept += f", {response.json_also};q=0.5"
        call.append(f"accept={py_literal(accept)}")
    # Curation may drop the outputSchema (the JSON comes as text), or keep the model for checking
    # only (`text` on mismatch: no outputSchema, a mismatching answer comes as text with a warning).
    checked = response.kind == "json" and op.output_schema
    structured = op.has_output_schema
    wrap = False
    if checked:
        returns_type = models.annotation(response.schema_key, aliases=True)
        if returns_type == "Any":  # a JSON body without a schema: the SDK publishes no schema for bare Any
            returns_type = "JsonValue"
        wrap = not models.is_object(returns_type)  # the MCP SDK's rule, decided at build time
        may_be_null = response.nullable or bool(response.empty_statuses)
        if may_be_null and returns_type not in ("JsonValue", "Any") and not re.search(r"\bNone\b", returns_type):
            returns_type, wrap = f"{returns_type} | None", True  # a union: wrapped, as the SDK's rule says
        call.append(f"returns={returns_type}")
        if wrap:
            call.append("wrap=True")
        if response.empty_statuses:
            call.append(f"empty_statuses={py_literal(response.empty_statuses)}")
        returns = f"Annotated[CallToolResult, {returns_type}]" if structured else "CallToolResult"
        if op.output_policy == "text":
            call.append(f"on_mismatch={py_literal('text')}")
    else:
        call.append(f"kind={py_literal('text' if response.kind == 'json' else response.kind)}")
        returns = "CallToolResult"
    return ToolView(
        op=op, signature=required + optional, returns=returns, call_args=call, structured=structured, wrapped=wrap
    )


def tool_imports(view: ToolView, models: Models) -> dict[str, list[str]]:
    """What one tool module imports: typing and pydantic names its text uses, and model names
    (classes, and the names a RootModel's root type uses) from the models package."""
    op = view.op
    text = " ".join([*view.signature, view.returns, *view.call_args])
    typing_names = [name for name in ("Annotated", "Any", "Literal") if re.search(rf"\b{name}\b", text)]
    pydantic_names = [name for name in ("Field", "JsonValue") if re.search(rf"\b{name}\b", text)]
    used: set[str] = set()
    if op.body is not None:
        used |= models.names_used(op.body.schema_key)
    if op.response.kind == "json" and op.output_schema:
        used |= models.names_used(op.response.schema_key, aliases=True)
    model_names = sorted(used - _TYPING_NAMES - _BUILTINS - set(pydantic_names))
    runtime_names = ["FileReference", "tool"] if re.search(r"\bFileReference\b", text) else ["tool"]
    return {
        "typing_imports": typing_names,
        "pydantic_imports": pydantic_names,
        "model_imports": model_names,
        "runtime_imports": runtime_names,
    }


def toolsets(plan: ApiPlan, browse: Browse) -> dict[str, Sequence[str]]:
    """Toolset name -> its tools, in the order of the spec: the operations' tags in snake_case (two
    tags with one snake_case name are one toolset), the toolsets discovery's list_toolsets names (a
    big tag's parts, `repos.branches`; small tags gathered, `tasks` holding "Task assignments"), so
    that `--toolsets` and `X-MCP-Toolsets` take them too, and the config's toolsets (which replace a
    toolset of the same name). Sorted by name. `browse`: the plan's `browse_toolsets`."""
    found: dict[str, list[str]] = {}
    for op in plan.operations:
        tagged = [name for name in (names.snake_case(tag) for tag in op.tags) if name]
        for name in [*tagged, browse.toolset_of[op.tool_name]] if tagged else []:  # no tag: only the config's
            if op.tool_name not in found.setdefault(name, []):
                found[name].append(op.tool_name)
    merged: dict[str, Sequence[str]] = {**found, **plan.toolsets}
    return dict(sorted(merged.items()))


# --- deployment descriptions (deploy/) ----------------------------------------------------------------

# What one replica needs, from `make load` (bench/LOAD.md): about 95 MiB resident at its peak under 100
# concurrent clients, and 0.8 to 1.0 ms of CPU per call (a quarter of a core serves about 250 calls a second).
# The memory limit leaves room for a big answer's models on top of that.
K8S_RESOURCES = {"requests": {"cpu": "250m", "memory": "128Mi"}, "limits": {"memory": "512Mi"}}
_K8S_NAME = re.compile(r"[^a-z0-9-]+")
_K8S_LABEL = re.compile(r"[^A-Za-z0-9._-]+")


@dataclass(frozen=True)
class DeployView:
    """What deploy/kubernetes.yaml says: names Kubernetes accepts, and the environment the server reads."""

    name: str  # a DNS-1123 label: the Deployment, Service, Secret, HorizontalPodAutoscaler...
    version: str  # a label value and image tag
    plain: list[tuple[str, str]]  # (variable, value): not secret
    secrets: list[str]  # variables read from the Secret `name`, under the same key
    resources: dict[str, dict[str, str]]
    link_key: str  # the key every replica seals links and confirmations with: from the Secret, required


def deploy_view(plan: ApiPlan, package_version: str, variables: list[dict[str, str | bool]]) -> DeployView:
    """The Kubernetes view of the package: `variables` is what the package reads (`ApiPlan.variables`):
    the base URL with its default, and every credential, each from the Secret named like the package."""
    name = _K8S_NAME.sub("-", plan.package_name.lower()).strip("-")[:63].strip("-") or "mcp-server"
    version = _K8S_LABEL.sub("-", package_version).strip("-._")[:63].strip("-._") or "0"
    plain, secrets = [], []
    for variable in variables:
        if variable["name"] == f"{plan.env_prefix}_BASE_URL":
            plain.append((str(variable["name"]), str(variable.get("default") or "")))
        else:  # every credential from the Secret, usernames too: one place to set them
            secrets.append(str(variable["name"]))
    return DeployView(name, version, plain, secrets, K8S_RESOURCES, f"{plan.env_prefix}_LINK_KEY")


# --- the whole package ------------------------------------------------------------------------------


# Modules rendered from a template whose variable parts are strings (path under the package ->
# template): each is checked against its template rendered with neutral strings (guard.same_shape).
# Those an import of the models runs (the package's `__init__` first): rendered, checked and imported
# before the others (`render_package`).
EARLY_MODULES = frozenset({"__init__.py", "_about.py", "models/__init__.py"})
DATA_TEMPLATES = {
    "__init__.py": "package/__init__.py.j2",
    "__main__.py": "package/__main__.py.j2",
    "asgi.py": "package/asgi.py.j2",
    "_about.py": "package/_about.py.j2",
    "upstream.py": "package/upstream.py.j2",
    "server.py": "package/server.py.j2",
    "tools/__init__.py": "package/tools/__init__.py.j2",
    "models/__init__.py": "package/models/__init__.py.j2",
}


# Each Python file -> its guard (raises SpecError); and what `render_package` leaves for later (files,
# their guards, each tool's table view), which `Package.complete()` renders.
Guards = dict[str, Callable[[str], ast.Module | None]]
Rest = tuple[dict[str, str], Guards, dict[str, tuple[Any, Any]]]

# From this many Python files, a package's check runs in two processes (a big API's ~30,000 modules
# take half a minute of parsing alone; a small one's fork would cost more than it saves).
FORK_FILES = 2000


@dataclass(frozen=True)
class Package:
    files: dict[str, str]  # relative path -> text, for the complete project
    guards: Guards  # each Python file -> its guard (raises SpecError)
    # What each checked module imports first (guard.leading_imports): the catalog's reuse keys.
    heads: dict[str, frozenset[tuple[object, ...]]] = field(default_factory=dict)
    model_modules: Mapping[str, str] = field(default_factory=dict)  # each model class -> its module under models/
    views: dict[str, tuple[Any, Any]] = field(default_factory=dict)  # tool -> its table view (tools.VIEWS)
    # The files `render_package` leaves for later, their guards and the tools' table views.
    rest: Callable[[], Rest] | None = None

    def complete(self) -> dict[str, str]:
        """Render the files left for later, add them, and return them."""
        if self.rest is None:
            return {}
        files, guards, views = self.rest()
        self.files.update(files)
        self.guards.update(guards)
        self.views.update(views)
        return files

    def check(self, files: Mapping[str, str | bytes]) -> None:
        """Check each Python file of `files` with its guard: the first that fails raises. Many files
        are checked in two halves at once, the second in a forked process (`children.forked`)."""
        python: list[tuple[str, str]] = []
        for path, text in files.items():
            if path.endswith(".py"):
                if path not in self.guards or not isinstance(text, str):
                    raise OutputError(f"internal error: generated {path} has no guard")
                python.append((path, text))
        if len(python) < FORK_FILES:
            self.heads.update(self._checked(python))
            return
        # Halves of about the same text (the cost of a check is its parse).
        total, middle = sum(len(text) for _, text in python), 0
        for seen in itertools.accumulate(len(text) for _, text in python):
            if 2 * seen >= total:
                break
            middle += 1
        with children.forked(functools.partial(self._checked, python[middle:])) as second:
            self.heads.update(self._checked(python[:middle]))  # an error here comes first: it is earlier
            self.heads.update(second())

    def _checked(self, python: list[tuple[str, str]]) -> dict[str, frozenset[tuple[object, ...]]]:
        heads = {}
        for path, text in python:
            tree = self.guards[path](text)
            if tree is not None:
                heads[path] = guard.leading_imports(tree)
        return heads


def render_package(
    plan: ApiPlan,
    models: Models,
    *,
    spec_sha256: str,
    spec_filename: str,
    package_version: str,
) -> Package:
    """The project and the guard of each of its Python files, in two steps: here, the models and all an
    import of them runs (EARLY_MODULES, the runtime, the model modules) with `pyproject.toml` (ruff's
    configuration); `Package.complete()` then adds the rest (the tool modules, the other modules, the
    search documents, the README...). So the models can be written and checked, and imported by the
    catalog workers, while the rest is rendered and checked."""
    env = templates()
    data_tools = plan.profile is Profile.DATA_TOOLS
    early = {
        "plan": plan,
        "spec_sha256": spec_sha256,
        "spec_filename": spec_filename,
        "package_version": package_version,
        "generator_version": __version__,
        "mcp_requirement": MCP_REQUIREMENT,
        "models_imported": sorted(models.modules.imported.items()),
        "module_of": sorted(models.modules.module_of.items()),
        "listing_icons": icons(plan.listing.icons),
        "data_tools": data_tools,
    }
    src = f"src/{plan.module}"
    files = {"pyproject.toml": env.get_template("pyproject.toml.j2").render(early), f"{src}/py.typed": ""}
    guards: Guards = {}
    _data_modules(env, early, lambda name: name in EARLY_MODULES, files, guards)
    # The runtime, `typed_mcp.runtime`, copied verbatim, file by file: the package runs the very code
    # the generator imports its contracts from and its tests exercise.
    runtime = runtime_dir()
    for path in sorted([*runtime.glob("*.py"), *runtime.glob("*.html")], key=lambda path: path.name):
        # the profile's module only in its packages, the semantic ranking's only in those that ship vectors
        if (path.name != "datatools.py" or data_tools) and (path.name != "semantic.py" or plan.search_semantic):
            files[f"{src}/_runtime/{path.name}"] = text = path.read_text(encoding="utf-8")
            guards[f"{src}/_runtime/{path.name}"] = functools.partial(_verbatim, f"{src}/_runtime/{path.name}", text)
    for module, source in models.modules.sources.items():
        files[f"{src}/models/{module}.py"] = source
        guards[f"{src}/models/{module}.py"] = functools.partial(models.check_module, module)
    rest = functools.partial(_rest, env, early, models)
    return Package(files, guards, model_modules=models.modules.module_of, rest=rest)


def _rest(env: jinja2.Environment, early: dict[str, Any], models: Models) -> Rest:
    """The files `render_package` leaves for `Package.complete()`, their guards, and each tool's table view."""
    plan: ApiPlan = early["plan"]
    browse = browse_toolsets(plan)
    if early["data_tools"]:  # every answer is under `data` of the structuredContent
        views = table_views(plan, {op.tool_name for op in plan.operations}, root=("data",))
        tables = {name: (rows[1:], columns) for name, (rows, columns) in views.items()}
        tools = [tool_view(op, models, tables.get(op.tool_name), True) for op in plan.operations]
    else:
        tools = [tool_view(op, models) for op in plan.operations]
        views = table_views(plan, {view.op.tool_name for view in tools if view.wrapped})
    context = {
        **early,
        "tools": tools,
        "schemes": list(plan.schemes.values()),
        "toolsets": toolsets(plan, browse),
        "views": views,
        "docker_base": DOCKER_BASE,
        "clients": client_setups(plan),
        "meta": contracts,  # the _meta keys the README names
        "deploy": deploy_view(plan, early["package_version"], plan.variables()),
    }
    src = f"src/{plan.module}"
    files = {
        "README.md": env.get_template("README.md.j2").render(context),
        "Dockerfile": env.get_template("Dockerfile.j2").render(context),
        "deploy/nginx.conf": env.get_template("deploy/nginx.conf.j2").render(context),
        "deploy/kubernetes.yaml": env.get_template("deploy/kubernetes.yaml.j2").render(context),
        f"{src}/search.json": search_documents(plan, browse),
    }
    if plan.search_semantic:  # the optional semantic ranking's vectors and tokenizer, beside search.json
        files.update({f"{src}/{name}": text for name, text in semantic_files(files[f"{src}/search.json"]).items()})
    guards: Guards = {}
    _data_modules(env, context, lambda name: name not in EARLY_MODULES, files, guards)
    tool_template = env.get_template("package/tools/tool.py.j2")
    # What the models package exports: its classes, and the names their types use (`Union`, `date`...).
    exported = {name: "model" for name in models.modules.module_of}
    exported.update({name: attribute for name, (_, attribute) in models.modules.imported.items()})
    for view in tools:
        text = tool_template.render({**context, "t": view, **tool_imports(view, models)})
        files[f"{src}/tools/{view.op.func_name}.py"] = text  # its Literals are in order (plan.parameters)
        guards[f"{src}/tools/{view.op.func_name}.py"] = functools.partial(_tool_module, view.op, exported)
    return files, guards, views


def _data_modules(
    env: jinja2.Environment,
    context: dict[str, Any],
    chosen: Callable[[str], bool],
    files: dict[str, str],
    guards: Guards,
) -> None:
    """Render the DATA_TEMPLATES `chosen` by their path under the package into `files`, each with its
    guard: the shape of the template rendered with neutral strings (`_neutral`)."""
    src = f"src/{context['plan'].module}"
    counter = itertools.count()
    neutral = {name: _neutral(value, counter) for name, value in context.items()}
    for name, template in DATA_TEMPLATES.items():
        if chosen(name):
            files[f"{src}/{name}"] = env.get_template(template).render(context)
            reference = env.get_template(template).render(neutral)
            guards[f"{src}/{name}"] = functools.partial(_same_shape, f"{src}/{name}", reference)


def _same_shape(path: str, reference: str, text: str) -> ast.Module:
    try:
        return guard.same_shape(text, reference)
    except guard.Refused as refused:
        raise SpecError(f"refused the generated {path}: {refused}") from None


def _verbatim(path: str, original: str, text: str) -> None:
    if text != original:
        raise SpecError(f"refused the generated {path}: it is not the runtime's own text")


def _tool_module(op: Operation, exported: dict[str, str], text: str) -> ast.Module:
    try:
        return guard.check_tool(text, function=op.func_name, models=exported)
    except guard.Refused as refused:
        raise SpecError(f"refused the generated tool module of operation {op.key}: {refused}") from None


def _neutral(value: Any, counter: Iterator[int]) -> Any:
    """`value` seen with every string replaced by a neutral one of its own (`s1`, `s2`... or the empty
    string), containers and truth values kept: rendered with it, a template whose variable parts are
    strings gives the same syntax tree as with the real values, but for the strings' values."""
    if isinstance(value, str):
        return f"s{next(counter)}" if value else ""
    if value is None or isinstance(value, (bool, int, float)):
        return value
    if isinstance(value, (list, tuple)):
        return type(value)(_neutral(item, counter) for item in value)
    if isinstance(value, dict):
        return {_neutral(key, counter): _neutral(item, counter) for key, item in value.items()}
    return _NeutralView(value, counter)


class _NeutralView:
    """An object whose attributes are read through `_neutral`."""

    def __init__(self, value: Any, counter: Iterator[int]) -> None:
        self._value, self._counter = value, counter

    def __getattr__(self, name: str) -> Any:
        return _neutral(getattr(self._value, name), self._counter)

    def __bool__(self) -> bool:
        return bool(self._value)
