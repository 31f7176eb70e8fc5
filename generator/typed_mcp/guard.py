"""The guard: every generated Python module is checked against the shapes typed-mcp writes, before
it is cached, staged, written or imported.

Spec text reaches generated code inside string literals only (descriptions, enum values, defaults,
patterns...). The steps that put it there are meant to keep it there; this module checks that they
did, on the module's syntax tree (never its text), and accepts only

- imports of what the generated code really uses (the pinned libraries, the package's own runtime,
  models and upstream), each name from a fixed list;
- in `models/`: classes whose bases are model classes or `RootModel[<type>]`, with a docstring,
  annotated fields whose defaults are literal data or `Field(<literal data>)`, and `model_config =
  ConfigDict(<literal data>)`; and the statements that come with them (`X.model_rebuild()`, one
  recursion limit);
- in `tools/`: the tool template's shape: one `@tool(...)` with constant arguments, an `async def`
  whose annotations are type expressions and whose defaults are literal data, a docstring and
  `return await api.call(...)` (or `data_call(...)`) of its own parameters and literal data;
- the other modules (`server.py`, `upstream.py`...), rendered from templates whose variable parts
  are strings, must have the tree of the same template rendered with neutral strings, but for the
  strings' values (`same_shape`).

A type expression is code, even inside a string: pydantic evaluates a string annotation (a forward
reference). So a string in a type position must itself be a type expression (without strings),
while `Literal[...]` values and `Annotated[...]` metadata are data. Every name must be defined in
the module, imported, or one of a few builtins; there is no other call, attribute access,
decorator, lambda, comprehension, assignment expression, dunder name... A module that fails raises
`Refused`, saying what was refused and in which top-level statement (so that the caller can name
the schema or the tool).
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Container, Mapping

from typed_mcp.pysource import parse
from typed_mcp.resources import runtime_dir

# Builtins a generated module may name without importing them: types only.
BUILTIN_TYPES = frozenset(
    {"bool", "bytes", "dict", "float", "frozenset", "int", "list", "object", "set", "str", "tuple"}
)
# Subscriptable types (besides Literal and Annotated, whose subscripts hold data).
GENERICS = frozenset({"list", "dict", "set", "frozenset", "tuple", "Optional", "Union", "RootModel", "DataResult"})
# Imported names that are called, never used as types.
CALLABLES = frozenset(
    {"Field", "ConfigDict", "PropertyCount", "StringConstraints", "TypeAliasType", "tool", "data_call", "api"}
)
METADATA = {"Field", "StringConstraints"}  # the calls `Annotated[...]` metadata may be

# What the code generator's models import (absolute imports; the model step makes the runtime's
# relative), name by name: what it writes for the schemas typed-mcp gives it.
CODEGEN_BASE_MODULE = "typed_mcp_runtime_base"
MODEL_LIBRARIES: Mapping[str, frozenset[str]] = {
    "typing": frozenset({"Annotated", "Any", "Literal", "Optional", "Union"}),
    "pydantic": frozenset(
        {"AnyUrl", "AwareDatetime", "Base64Str", "ConfigDict", "EmailStr", "Field", "NaiveDatetime", "RootModel"}
        | {"SecretStr", "StringConstraints", "UUID1", "UUID3", "UUID4", "UUID5"}
    ),
    "typing_extensions": frozenset({"TypeAliasType"}),
    "datetime": frozenset({"date", "datetime", "time", "timedelta"}),
    "decimal": frozenset({"Decimal"}),
    "enum": frozenset({"Enum"}),
    "uuid": frozenset({"UUID"}),
    "ipaddress": frozenset({"IPv4Address", "IPv6Address", "IPv4Network", "IPv6Network"}),
    "pathlib": frozenset({"Path"}),
    # A model with a field named like a builtin type (`list`) shadows it in its class body: the code
    # generator then writes every such type under an alias (`from builtins import list as list_aliased`).
    "builtins": frozenset({"bool", "bytes", "dict", "float", "frozenset", "int", "list", "set", "str", "tuple"}),
}
CODEGEN_BASE = frozenset({"OpenModel"})
TYPED_EXTRA = "__pydantic_extra__"  # the one reserved field name: the type of unknown fields (additionalProperties)
# What a model module takes from the package's runtime: base classes and format types.
RUNTIME_BASES = frozenset({"OpenModel", "CountedModel", "DeferredOpenModel", "DeferredCountedModel"})
RUNTIME_MODEL_NAMES = (
    RUNTIME_BASES
    | {"PropertyCount"}
    | {
        "EmailStr",
        "AwareDatetime",
        "UriReference",
        "Date",
        "Time",
        "Duration",
        "Uuid",
        "IPv4",
        "IPv6",
    }
)

# What a tool module imports (relative ones from the package), and the keywords of `@tool(...)` and
# of the runtime's call.
TOOL_LIBRARIES: Mapping[str, frozenset[str]] = {
    "typing": frozenset({"Annotated", "Any", "Literal"}),
    "mcp.types": frozenset({"CallToolResult"}),
    "pydantic": frozenset({"Field", "JsonValue"}),
}
TOOL_PACKAGE: Mapping[str, frozenset[str]] = {
    "_runtime": frozenset({"tool", "FileReference"}),
    "_runtime.datatools": frozenset({"DataResult", "data_call"}),
    "upstream": frozenset({"api"}),
}
# Every name a generated module may import: a class may not be called so (it would shadow the import).
IMPORTED_NAMES = frozenset().union(
    *MODEL_LIBRARIES.values(), CODEGEN_BASE, RUNTIME_MODEL_NAMES, *TOOL_LIBRARIES.values(), *TOOL_PACKAGE.values()
)
CALL_ARGUMENTS = frozenset({"path_params", "query", "headers", "cookies"})  # {wire name: parameter}
CALL_BODIES = frozenset({"json_body", "form_body", "multipart_body", "text_body", "base64_body"})


def _keywords(module: str, function: str) -> frozenset[str]:
    """The keyword-only parameters of `function` in the runtime's `module`, read from its source:
    what the tool template may pass is what the runtime takes, kept in step with it by construction."""
    tree = ast.parse((runtime_dir() / module).read_text(encoding="utf-8"))
    found = [
        node
        for node in ast.walk(tree)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == function
    ]
    if len(found) != 1:
        raise RuntimeError(f"the runtime's {module} does not define one {function}")
    return frozenset(argument.arg for argument in found[0].args.kwonlyargs)


TOOL_DECORATOR = _keywords("registry.py", "tool")  # @tool(...): constants only
# The runtime call's other keywords: literal data only.
CALL_DATA = (
    (_keywords("http.py", "call") | _keywords("datatools.py", "data_call")) - CALL_ARGUMENTS - CALL_BODIES - {"returns"}
)


class Refused(Exception):
    """Generated code of a shape typed-mcp does not write: `what`, at `node`, in `statement`."""

    def __init__(self, what: str, node: ast.AST | None = None) -> None:
        super().__init__(what)
        self.what = what
        self.node = node
        self.statement: ast.stmt | None = None

    def __str__(self) -> str:
        if self.node is None:
            return self.what
        return f"{self.what}: {ast.unparse(self.node)[:100]!r}"


def _reserved(name: str) -> bool:
    return name.startswith("__") or not name.isidentifier()


def literal_data(node: ast.AST) -> bool:
    """Whether `node` is a literal: constants, signed numbers, and tuples, lists, sets and dicts of them."""
    stack = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, ast.Constant):
            continue
        if (
            isinstance(item, ast.UnaryOp)
            and isinstance(item.op, (ast.USub, ast.UAdd))
            and isinstance(item.operand, ast.Constant)
            and type(item.operand.value) in (int, float)
        ):
            continue
        if isinstance(item, (ast.Tuple, ast.List, ast.Set)):
            stack.extend(item.elts)
        elif isinstance(item, ast.Dict) and all(key is not None for key in item.keys):
            stack.extend([*(key for key in item.keys if key is not None), *item.values])
        else:
            return False
    return True


def _scalar(node: ast.AST) -> bool:
    """A `Literal[...]` value: a constant or a signed number."""
    return isinstance(node, (ast.Constant, ast.UnaryOp)) and literal_data(node)


def _docstring(node: ast.stmt) -> bool:
    return isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)


class _Scope:
    """The names of one module: local name -> what it is (the imported name, or "class", "model",
    "parameter"), and the checks of expressions against them."""

    def __init__(self) -> None:
        self.origin: dict[str, str] = {}

    def add(self, local: str, origin: str, node: ast.AST) -> None:
        if _reserved(local) or local in self.origin or local in BUILTIN_TYPES:
            raise Refused("a name defined twice, or reserved", node)
        self.origin[local] = origin

    def of(self, name: str) -> str | None:
        return name if name in BUILTIN_TYPES else self.origin.get(name)

    # -- type expressions: code, even inside strings

    def type(self, node: ast.AST) -> None:
        stack: list[tuple[ast.AST, bool]] = [(node, False)]  # (node, inside a forward reference)
        while stack:
            item, quoted = stack.pop()
            if isinstance(item, ast.Constant) and item.value is None:
                continue
            if isinstance(item, ast.Constant) and isinstance(item.value, str) and not quoted:
                stack.append((self._forward(item.value, item), True))  # pydantic evaluates it
                continue
            if isinstance(item, ast.Name):
                if self.of(item.id) in (None, "Literal", "Annotated", *CALLABLES):
                    raise Refused("a name that is not a defined or imported type", item)
                continue
            if isinstance(item, ast.BinOp) and isinstance(item.op, ast.BitOr):
                stack += [(item.left, quoted), (item.right, quoted)]
                continue
            if isinstance(item, ast.Subscript) and isinstance(item.value, ast.Name):
                generic = self.of(item.value.id)
                parts = item.slice.elts if isinstance(item.slice, ast.Tuple) else [item.slice]
                if generic == "Literal":
                    if not all(_scalar(part) for part in parts):
                        raise Refused("a Literal value that is not a constant", item)
                    continue
                if generic == "Annotated" and len(parts) >= 2:
                    stack.append((parts[0], quoted))
                    for meta in parts[1:]:
                        if not literal_data(meta):
                            self.call(meta, METADATA)
                    continue
                if generic in GENERICS:
                    stack += [
                        (part, quoted)
                        for part in parts
                        if not (generic == "tuple" and isinstance(part, ast.Constant) and part.value is Ellipsis)
                    ]
                    continue
            raise Refused("an expression that is not a type", item)

    def _forward(self, text: str, node: ast.Constant) -> ast.AST:
        try:
            body = parse(text, "<forward reference>").body
        except SyntaxError:
            body = []
        if len(body) != 1 or not isinstance(body[0], ast.Expr):
            raise Refused("a forward reference that is not a type", node)
        return body[0].value

    # -- calls with data

    def call(self, node: ast.AST, allowed: set[str], nested: Mapping[str, set[str]] | None = None) -> None:
        """A call of a name imported as one of `allowed`, with literal data (or, for a keyword of
        `nested`, a call of what it names, checked the same way)."""
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and self.of(node.func.id) in allowed):
            raise Refused(f"a call of something other than {' or '.join(sorted(allowed))}", node)
        if any(k.arg is None or _reserved(k.arg) for k in node.keywords):
            raise Refused("a keyword argument that is not a plain name", node)
        for argument in node.args:
            if not literal_data(argument):
                raise Refused("an argument that is not literal data", argument)
        for keyword in node.keywords:
            if literal_data(keyword.value):
                continue
            if nested and keyword.arg is not None and keyword.arg in nested:
                self.call(keyword.value, nested[keyword.arg])
                continue
            raise Refused("an argument that is not literal data", keyword.value)


def _parse(source: str) -> ast.Module:
    try:
        return parse(source)
    except SyntaxError as exc:
        raise Refused(f"code that does not parse (line {exc.lineno}: {exc.msg})") from None


def _each(tree: ast.Module, check: Callable[[int, ast.stmt], None]) -> None:
    """Run `check(index, statement)` on each top-level statement, a refusal naming its statement."""
    for index, node in enumerate(tree.body):
        try:
            check(index, node)
        except Refused as refused:
            refused.statement = refused.statement or node
            raise


# --- models ------------------------------------------------------------------------------------------


def check_models(source: str, *, split_module: bool = False, classes: Container[str] | None = None) -> ast.Module:
    """Check a models source and return its tree: the code generator's output (absolute imports,
    its base class module), or with `split_module` one module of `models/` (the runtime and the
    sibling modules imported relatively; a sibling import must name some of `classes`, the
    models' classes, when given)."""
    tree = _parse(source)
    scope = _Scope()
    state = {"sys": False}

    def imports(index: int, node: ast.stmt) -> None:
        if isinstance(node, ast.ImportFrom):
            _model_import(node, scope, split_module, classes)
        elif isinstance(node, ast.Import):
            if not (split_module and [(a.name, a.asname) for a in node.names] == [("sys", None)]) or state["sys"]:
                raise Refused("an import statement", node)
            state["sys"] = True
        elif isinstance(node, ast.ClassDef):
            scope.add(node.name, "class", node)  # a class named like an import would shadow it
        elif isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            scope.add(node.targets[0].id, "alias", node)
        elif not isinstance(node, ast.Expr):
            raise Refused("a statement that is not a model definition", node)

    def definitions(index: int, node: ast.stmt) -> None:
        if isinstance(node, ast.ClassDef):
            _model_class(node, scope)
        elif isinstance(node, ast.Assign):
            _type_alias(node, scope)
        elif isinstance(node, ast.Expr) and not (index == 0 and _docstring(node)):
            _model_statement(node, scope, state["sys"])

    _each(tree, imports)
    _each(tree, definitions)
    return tree


def _model_import(node: ast.ImportFrom, scope: _Scope, split_module: bool, classes: Container[str] | None) -> None:
    module, level = node.module or "", node.level
    allowed: Container[str] | None
    if split_module and level == 2 and module == "_runtime":
        allowed = RUNTIME_MODEL_NAMES
    elif split_module and level == 1 and not _reserved(module):
        allowed = classes  # a sibling module: model classes
    elif level == 0 and module in MODEL_LIBRARIES:
        allowed = MODEL_LIBRARIES[module]
    elif not split_module and level == 0 and module == CODEGEN_BASE_MODULE:
        allowed = CODEGEN_BASE
    else:
        raise Refused("an import from a module models do not use", node)
    for alias in node.names:
        if _reserved(alias.name) or (allowed is not None and alias.name not in allowed):
            raise Refused(f"an import of a name models do not take from {'.' * level}{module}", node)
        scope.add(alias.asname or alias.name, "model" if level == 1 else alias.name, node)


def _model_class(node: ast.ClassDef, scope: _Scope) -> None:
    if node.decorator_list or node.keywords:
        raise Refused("a class with decorators or keywords", node)
    if len(node.bases) == 1 and isinstance(node.bases[0], ast.Name) and scope.of(node.bases[0].id) == "Enum":
        _enum_class(node)
        return
    for base in node.bases:
        if isinstance(base, ast.Name) and scope.of(base.id) in ("class", "model", *RUNTIME_BASES):
            continue
        if (
            isinstance(base, ast.Subscript)
            and isinstance(base.value, ast.Name)
            and scope.of(base.value.id) == "RootModel"
        ):
            scope.type(base.slice)
            continue
        raise Refused("a base class that is not a model", base)
    for index, statement in enumerate(node.body):
        if (index == 0 and _docstring(statement)) or isinstance(statement, ast.Pass):
            continue
        if isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name) and statement.simple:
            if _reserved(statement.target.id) and statement.target.id != TYPED_EXTRA:
                raise Refused("a field with a reserved name", statement)
            scope.type(statement.annotation)
            if statement.value is not None and not literal_data(statement.value):
                scope.call(statement.value, {"Field"})
            continue
        if isinstance(statement, ast.Assign) and [getattr(t, "id", None) for t in statement.targets] == [
            "model_config"
        ]:
            scope.call(statement.value, {"ConfigDict"}, {"json_schema_extra": {"PropertyCount"}})
            continue
        raise Refused("a statement that is not a field, a docstring or the model's config", statement)


def _type_alias(node: ast.Assign, scope: _Scope) -> None:
    """`X = TypeAliasType("X", <type>)`."""
    value = node.value
    name = node.targets[0].id  # type: ignore[attr-defined]  # a Name: the first pass admits no other target
    if not (
        isinstance(value, ast.Call)
        and isinstance(value.func, ast.Name)
        and scope.of(value.func.id) == "TypeAliasType"
        and len(value.args) == 2
        and not value.keywords
        and isinstance(value.args[0], ast.Constant)
        and value.args[0].value == name
    ):
        raise Refused("an assignment that is not a type alias", node)
    scope.type(value.args[1])


def _enum_class(node: ast.ClassDef) -> None:
    """An Enum of literal data: a docstring and `NAME = <literal>` members."""
    for index, statement in enumerate(node.body):
        if index == 0 and _docstring(statement):
            continue
        if not (
            isinstance(statement, ast.Assign)
            and len(statement.targets) == 1
            and isinstance(statement.targets[0], ast.Name)
            and not _reserved(statement.targets[0].id)
            and literal_data(statement.value)
        ):
            raise Refused("an enum member that is not literal data", statement)


def _model_statement(node: ast.Expr, scope: _Scope, imported_sys: bool) -> None:
    """`X.model_rebuild()` of a class of the module, or the recursion limit a deep group needs."""
    call = node.value
    if (
        isinstance(call, ast.Call)
        and not call.args
        and not call.keywords
        and isinstance(call.func, ast.Attribute)
        and call.func.attr == "model_rebuild"
        and isinstance(call.func.value, ast.Name)
        and scope.of(call.func.value.id) == "class"
    ):
        return
    if imported_sys and _recursion_limit(call):
        return
    raise Refused("a statement that is not a model definition", node)


_RECURSION_LIMIT = ast.dump(ast.parse("sys.setrecursionlimit(max(sys.getrecursionlimit(), 0))", mode="eval").body)


def _recursion_limit(call: ast.AST) -> bool:
    """`sys.setrecursionlimit(max(sys.getrecursionlimit(), <int>))`, exactly."""
    try:
        limit = call.args[0].args[1]  # type: ignore[attr-defined]  # any other shape raises, and is refused
    except (AttributeError, IndexError):
        return False
    if not (isinstance(limit, ast.Constant) and type(limit.value) is int):
        return False
    return ast.dump(call).replace(ast.dump(limit), ast.dump(ast.Constant(0)), 1) == _RECURSION_LIMIT


# --- tools -------------------------------------------------------------------------------------------


def check_tool(source: str, *, function: str, models: Mapping[str, str]) -> ast.Module:
    """Check one tool module (`tools/<function>.py`): the tool template's shape; `models`: the
    names the models package exports, each to what it is ("model" for a class, else the name it
    imports: `Union`, `Date`...)."""
    tree = _parse(source)
    scope = _Scope()
    seen = {"function": False}

    def check(index: int, node: ast.stmt) -> None:
        if index == 0 and _docstring(node):
            return
        if isinstance(node, ast.ImportFrom):
            _tool_import(node, scope, models)
        elif isinstance(node, ast.AsyncFunctionDef) and node.name == function and not seen["function"]:
            seen["function"] = True
            _tool_function(node, scope)
        else:
            raise Refused("a statement that is not an import or the tool function", node)

    _each(tree, check)
    if not seen["function"]:
        raise Refused(f"no tool function {function}")
    return tree


def _tool_import(node: ast.ImportFrom, scope: _Scope, exported: Mapping[str, str]) -> None:
    module = node.module or ""
    allowed: Mapping[str, str]
    if node.level == 0 and module in TOOL_LIBRARIES:
        allowed = {name: name for name in TOOL_LIBRARIES[module]}
    elif node.level == 2 and module in TOOL_PACKAGE:
        allowed = {name: name for name in TOOL_PACKAGE[module]}
    elif node.level == 2 and module == "models":
        allowed = exported
    else:
        raise Refused("an import from a module tools do not use", node)
    for alias in node.names:
        if alias.name not in allowed or alias.asname is not None:
            raise Refused(f"an import of a name tools do not take from {'.' * node.level}{module}", node)
        scope.add(alias.name, allowed[alias.name], node)


def _tool_function(node: ast.AsyncFunctionDef, scope: _Scope) -> None:
    decorator = node.decorator_list[0] if len(node.decorator_list) == 1 else None
    if not (
        isinstance(decorator, ast.Call)
        and isinstance(decorator.func, ast.Name)
        and scope.of(decorator.func.id) == "tool"
        and not decorator.args
        and all(k.arg in TOOL_DECORATOR and isinstance(k.value, ast.Constant) for k in decorator.keywords)
    ):
        raise Refused("a decorator other than @tool(...) with constant arguments", node)
    arguments = node.args
    if arguments.posonlyargs or arguments.vararg or arguments.kwonlyargs or arguments.kwarg or node.type_comment:
        raise Refused("a tool function signature of another form", node)
    for argument in arguments.args:
        if argument.annotation is None or argument.type_comment:
            raise Refused("a tool argument without a type", argument)
        scope.type(argument.annotation)
    for default in arguments.defaults:
        if not literal_data(default):
            raise Refused("a default that is not literal data", default)
    if node.returns is None:
        raise Refused("a tool function without a return type", node)
    _tool_result(node.returns, scope)
    parameters = {argument.arg for argument in arguments.args}
    if any(_reserved(name) for name in parameters) or len(parameters) != len(arguments.args):
        raise Refused("a tool argument with a reserved or repeated name", node.args)
    body = node.body
    if not (len(body) == 2 and _docstring(body[0]) and isinstance(body[1], ast.Return)):
        raise Refused("a tool function body other than a docstring and one return", node)
    answer = body[1].value
    if not (isinstance(answer, ast.Await) and isinstance(answer.value, ast.Call)):
        raise Refused("a return other than `await` of the runtime's call", body[1])
    _runtime_call(answer.value, scope, parameters)


def _tool_result(node: ast.AST, scope: _Scope) -> None:
    """`CallToolResult`, or `Annotated[CallToolResult, <type>]` (the SDK publishes <type> as the
    output schema: code, like any type), where <type> may be `DataResult[<type>]`."""
    if isinstance(node, ast.Name) and scope.of(node.id) == "CallToolResult":
        return
    if (
        isinstance(node, ast.Subscript)
        and isinstance(node.value, ast.Name)
        and scope.of(node.value.id) == "Annotated"
        and isinstance(node.slice, ast.Tuple)
        and len(node.slice.elts) == 2
        and isinstance(node.slice.elts[0], ast.Name)
        and scope.of(node.slice.elts[0].id) == "CallToolResult"
    ):
        scope.type(node.slice.elts[1])
        return
    raise Refused("a tool return type other than CallToolResult", node)


def _runtime_call(call: ast.Call, scope: _Scope, parameters: set[str]) -> None:
    """`api.call(<method>, <path>, ...)` or `data_call(api, <method>, <path>, ...)`."""
    func = call.func
    target: ast.expr
    if isinstance(func, ast.Attribute) and func.attr == "call" and isinstance(func.value, ast.Name):
        target, positional = func.value, call.args
    elif isinstance(func, ast.Name) and scope.of(func.id) == "data_call" and call.args:
        target, positional = call.args[0], call.args[1:]
    else:
        raise Refused("a call other than the runtime's", call)
    if not (isinstance(target, ast.Name) and scope.of(target.id) == "api"):
        raise Refused("a call of something other than the upstream api", call)
    # The call runs in the function: a parameter named like a name it uses (`api`, a type of
    # `returns=`) would stand for it there.
    outside = [call.func, *call.args, *(k.value for k in call.keywords if k.arg not in CALL_ARGUMENTS | CALL_BODIES)]
    shadowed = {n.id for node in outside for n in ast.walk(node) if isinstance(n, ast.Name)} & parameters
    if shadowed:
        raise Refused(f"a tool argument named like a name the call uses ({sorted(shadowed)[0]})", call)
    if len(positional) != 2 or not all(isinstance(a, ast.Constant) and isinstance(a.value, str) for a in positional):
        raise Refused("a method and path that are not constants", call)
    for keyword in call.keywords:
        value = keyword.value
        if keyword.arg == "returns":
            scope.type(value)
        elif keyword.arg in CALL_BODIES:
            if not (isinstance(value, ast.Name) and value.id in parameters):
                raise Refused("a body that is not a parameter", value)
        elif keyword.arg in CALL_ARGUMENTS:
            if not (
                isinstance(value, ast.Dict)
                and all(isinstance(k, ast.Constant) and isinstance(k.value, str) for k in value.keys)
                and all((isinstance(v, ast.Name) and v.id in parameters) or literal_data(v) for v in value.values)
            ):
                raise Refused("request parameters that are not {name: parameter}", value)
        elif keyword.arg in CALL_DATA:
            if not literal_data(value):
                raise Refused("an argument that is not literal data", value)
        else:
            raise Refused("an argument the runtime's call does not take", keyword.value)


# --- modules rendered from templates -----------------------------------------------------------------


def same_shape(source: str, reference: str) -> ast.Module:
    """Check that `source` has the syntax tree of `reference` (the same template rendered with
    neutral strings), but for the values of strings, and the order of its top-level imports and
    those left out as unused (the package's import fixes, render.tidy); returns its tree."""
    tree = _parse(source)
    try:
        expected = parse(reference)
    except SyntaxError as exc:
        raise Refused(f"internal error: the reference rendering does not parse ({exc.msg})") from None
    imports, body = _imports_and_body(tree)
    allowed, expected_body = _imports_and_body(expected)
    if not imports <= allowed:
        raise Refused(f"an import its template does not have ({sorted(imports - allowed)[0]})")
    if len(body) != len(expected_body):
        raise Refused("a module whose statements are not its template's")
    for node, model in zip(body, expected_body, strict=True):
        if _skeleton(node) != _skeleton(model):
            refused = Refused("a statement that is not its template's", node)
            refused.statement = node
            raise refused
    return tree


def _imports_and_body(tree: ast.Module) -> tuple[set[tuple[object, ...]], list[ast.stmt]]:
    imports = [node for node in tree.body if isinstance(node, (ast.Import, ast.ImportFrom))]
    return _imported(imports), [node for node in tree.body if not isinstance(node, (ast.Import, ast.ImportFrom))]


def _skeleton(node: ast.AST) -> str:
    """`ast.dump` of `node` with the value of every string constant blanked, but in annotations
    (a string there is a type: code)."""
    typed: set[int] = set()
    for item in ast.walk(node):
        annotations = [getattr(item, "annotation", None), getattr(item, "returns", None)]
        typed.update(id(sub) for annotation in annotations if annotation is not None for sub in ast.walk(annotation))
    blanked = [
        (item, item.value)
        for item in ast.walk(node)
        if isinstance(item, ast.Constant) and isinstance(item.value, str) and id(item) not in typed
    ]
    for item, _ in blanked:
        item.value = ""
    try:
        return ast.dump(node)
    finally:
        for item, value in blanked:
            item.value = value


# --- what a checked module imports ------------------------------------------------------------------


def leading_imports(tree: ast.Module) -> frozenset[tuple[object, ...]]:
    """The imports a checked module starts with, after its docstring: (module, level, name, asname)."""
    body = list(tree.body)
    if body and _docstring(body[0]):
        body.pop(0)
    imports: list[ast.Import | ast.ImportFrom] = []
    while body and isinstance(first := body[0], (ast.Import, ast.ImportFrom)):
        imports.append(first)
        body.pop(0)
    return frozenset(_imported(imports))


def _imported(nodes: list[ast.Import | ast.ImportFrom]) -> set[tuple[object, ...]]:
    return {
        (node.module if isinstance(node, ast.ImportFrom) else None, getattr(node, "level", 0), a.name, a.asname)
        for node in nodes
        for a in node.names
    }
