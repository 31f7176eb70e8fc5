"""Step 3: turn the document into the IR (`ApiPlan`): one `Operation` per path x method. This is
the driver: it names the tools, walks the operations and asks `parameters`, `bodies`, `responses`
and `security` for each one's parts.

An operation this generator cannot express is skipped with its reason recorded in the plan's
report; nothing disappears silently.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any
from urllib.parse import parse_qsl, urljoin

from typed_mcp import names, pointer
from typed_mcp.errors import NoOperationsError, SpecError
from typed_mcp.plan import hints, prose
from typed_mcp.plan.bodies import request_body
from typed_mcp.plan.curation import Curation, RawOp
from typed_mcp.plan.ir import ApiPlan, Draft, Operation, Response, SecurityScheme, Skipped
from typed_mcp.plan.listing import listing
from typed_mcp.plan.parameters import operation_parameters
from typed_mcp.plan.reading import Unsupported, mapping, nonblank
from typed_mcp.plan.resolved import resolved, tags
from typed_mcp.plan.responses import primary_response
from typed_mcp.plan.security import security_requirements, security_schemes
from typed_mcp.plan.variants import Views
from typed_mcp.profile import Profile
from typed_mcp.spec.load import redact_url
from typed_mcp.spec.normalize import HTTP_METHODS, Document


def plan(
    doc: Document,
    *,
    package_name: str,
    module: str,
    spec_url: str | None = None,
    tool_prefix: str = "",
    curation: Curation | None = None,
    profile: Profile = Profile.DEFAULT,
) -> ApiPlan:
    """The finished plan, frozen: the one place it is made. `tool_prefix` starts every tool name (see
    `names.tool_prefix`); it counts within the limits. `curation` chooses the operations and their
    names, and finishes the operations (plan/curation.py)."""
    prefix = names.tool_prefix(tool_prefix)
    data = doc.data
    info = mapping(data.get("info"))
    schemes = security_schemes(doc, module.upper())
    title = nonblank(info.get("title")) or module
    draft = Draft()
    registry = curation.config.registry if curation is not None else None
    presented = listing(data, title, registry, draft.warnings)
    unusable = dict(doc.unusable)  # "METHOD /path" -> why it cannot be generated
    draft.degraded = list(doc.degraded)
    raw_ops = list(_iter_operations(doc, unusable, draft.degraded))
    if not raw_ops:
        webhooks = data.get("webhooks")
        extra = (
            f" (it has {len(webhooks)} webhooks, which are not callable)"
            if isinstance(webhooks, dict) and webhooks
            else ""
        )
        raise NoOperationsError(f"the document has no operations under 'paths'{extra}", source=doc.origin)
    if curation is not None:
        raw_ops = curation.select(doc, raw_ops)
        if not raw_ops:
            raise NoOperationsError(
                "the curation (x-mcp, overlays, config) excludes every operation", source=doc.origin
            )

    target = max(names.TARGET_TOOL_NAME - len(prefix), names.TARGET_TOOL_NAME // 2)
    choices = names.tool_name_choices(
        (
            (key, names.spelled(_operation_id(op), path, _title(op)), method, path)
            for key, path, method, _, op in raw_ops
            if curation is None or not curation.named(key)
        ),
        target,
    )
    tool_names = names.unique_tool_names(choices.items(), limit=names.MAX_TOOL_NAME - len(prefix), target=target)
    if curation is not None:
        tool_names = curation.tool_names(prefix, tool_names)
    component_names = set((data.get("components") or {}).get("schemas") or {})
    taken_keys = set(component_names)
    views = Views(doc, taken_keys)
    root_security = data.get("security")
    for key, path, method, path_item, op in raw_ops:
        tool = prefix + tool_names[key]
        schemas, warnings = len(draft.schemas), len(draft.warnings)  # an operation only adds schemas
        try:
            if key in unusable:
                raise Unsupported(unusable[key])
            draft.operations.append(
                _operation(
                    doc,
                    key,
                    path,
                    method,
                    path_item,
                    op,
                    tool,
                    root_security,
                    schemes,
                    draft,
                    taken_keys,
                    views,
                    curation,
                )
            )
        except (Unsupported, SpecError, *_MALFORMED) as exc:
            # The unit of failure is the operation: what it had added goes, the others stay.
            while len(draft.schemas) > schemas:
                draft.schemas.popitem()  # the last added
            del draft.warnings[warnings:]
            draft.skipped.append(Skipped(key, _reason(exc)))
    if curation is not None:
        curation.finish(draft, schemes)
    if not draft.operations:
        reasons = "; ".join(f"{s.key}: {s.reason}" for s in draft.skipped[:3])
        raise NoOperationsError(f"no operation could be generated ({reasons})", source=doc.origin)
    return ApiPlan(
        title=title,
        api_version=nonblank(info.get("version")) or "0",
        description=nonblank(info.get("description")) or "",
        openapi_version=doc.version,
        default_base_url=_default_base_url(data, spec_url),
        package_name=package_name,
        module=module,
        env_prefix=module.upper(),
        operations=tuple(resolved(op, draft.schemas, doc) for op in draft.operations),
        schemes=schemes,
        schemas=draft.schemas,
        skipped=tuple(draft.skipped),
        warnings=tuple(draft.warnings),
        degraded=tuple(draft.degraded),
        extra_headers=draft.extra_headers,
        toolsets=draft.toolsets,
        search_synonyms=draft.search_synonyms,
        search_semantic=draft.search_semantic,
        curation=tuple(draft.curation),
        curation_sources=tuple(draft.curation_sources),
        profile=profile,
        listing=presented,
        tags=tags(doc),
    )


def _default_base_url(data: dict[str, Any], spec_url: str | None) -> str | None:
    servers = data.get("servers")
    url = "/"
    if (
        isinstance(servers, list)
        and servers
        and isinstance(servers[0], dict)
        and isinstance(servers[0].get("url"), str)
    ):
        server = servers[0]
        url = server["url"]
        for name, variable in (server.get("variables") or {}).items():
            if isinstance(variable, dict) and "default" in variable:
                url = url.replace("{" + str(name) + "}", str(variable["default"]))
    if url.startswith(("http://", "https://")):
        return url.rstrip("/") or url
    if spec_url:
        # Relative to where the spec was fetched, never with that URL's user info, query or fragment:
        # they may hold a credential (`https://user:token@host/`, `?access_token=`).
        return urljoin(redact_url(spec_url), url).rstrip("/")
    return None


def _iter_operations(doc: Document, unusable: dict[str, str], degraded: list[str]) -> Iterator[RawOp]:
    """Every operation; one that cannot be read is yielded as `{}` with its reason in `unusable`,
    and a path item that cannot be read is left out with a note in `degraded`."""
    paths = doc.data.get("paths") or {}
    for path, path_item in paths.items():
        here = pointer.join("#/paths", path)
        try:
            path_item, _ = doc.deref(path_item, here)
        except SpecError as exc:
            degraded.append(f"{here}: {exc.message}: its operations are left out")
            continue
        if not isinstance(path_item, dict):
            degraded.append(f"{here}: a path item must be an object: left out")
            continue
        for method in HTTP_METHODS:
            key, op = f"{method.upper()} {path}", path_item.get(method)
            if op is None:
                continue
            try:
                op, _ = doc.deref(op, f"{here}/{method}")  # Redocly's `get: {$ref: ...}`, within the file
            except SpecError as exc:
                unusable.setdefault(key, f"{exc.message} ({exc.pointer})")
            if not isinstance(op, dict):
                unusable.setdefault(key, f"the operation must be an object, got {type(op).__name__}")
                op = {}
            yield key, path, method, path_item, op


# What malformed spec data raises where the plan reads a shape it expects (a list for an object):
# a reason for skipping that operation, not for ending the run.
_MALFORMED = (AttributeError, TypeError, KeyError, ValueError, IndexError)


def _reason(exc: Exception) -> str:
    if isinstance(exc, SpecError):
        return f"{exc.message} ({exc.pointer})" if exc.pointer else exc.message
    if isinstance(exc, Unsupported):
        return str(exc)
    return f"part of the operation has an unexpected shape ({type(exc).__name__}: {exc})"


def _operation(
    doc: Document,
    key: str,
    path: str,
    method: str,
    path_item: dict[str, Any],
    op: dict[str, Any],
    tool: str,
    root_security: Any,
    schemes: dict[str, SecurityScheme],
    result: Draft,
    taken_keys: set[str],
    views: Views,
    curation: Curation | None = None,
) -> Operation:
    # Some specs tell operations on one path apart with a fragment (`/files/{id}#copy`) or a
    # fixed query (`/search?type=user`): neither is part of the path that is requested.
    request_path, _, query_text = path.split("#", 1)[0].partition("?")
    if not request_path.startswith("/") or any(c in request_path for c in "\r\n\\"):
        raise Unsupported(f"path {path!r} is not a plain absolute path")
    fixed_query = tuple(parse_qsl(query_text, keep_blank_values=True))
    dropped: list[str] = []
    params = operation_parameters(doc, request_path, path_item, op, dropped)
    result.warnings.extend(f"{key}: {reason}" for reason in dropped)
    body = request_body(doc, path_item, op, tool, result, taken_keys, {p.arg_name for p in params}, views)
    naive = curation is not None and curation.naive_datetimes(key) is not None
    response = primary_response(doc, op, tool, result, taken_keys, views, naive)
    if method.lower() == "head" and response.kind != "empty":
        # A HEAD response never has a body (HTTP), whatever the spec declares for it.
        response = Response(status=response.status, kind="empty", media_type=None)
    summary = nonblank(op.get("summary"))
    description = nonblank(op.get("description"))
    # What an agent reads first is plain text: the title, and the description's first block (a
    # summary, or a description written in HTML); an operation without a summary takes its
    # description's first sentence as its title, and so does one whose summary is more than a
    # sentence (a description written where the summary goes, Markdown and all), which is then the
    # start of its description.
    title = _title(op)
    rest = description if description != summary else None
    if summary and prose.is_one_sentence(summary):
        text = "\n\n".join(part for part in (title, rest) if part) or None
    elif summary:
        text = "\n\n".join(part for part in (prose.with_plain_first_block(summary), rest) if part) or None
    else:
        text = prose.with_plain_first_block(description) if description else None
    if op.get("deprecated") is True:
        text = ("Deprecated. " + text) if text else "Deprecated."
    operation_id = _operation_id(op)
    return Operation(
        key=key,
        tool_name=tool,
        func_name=names.python_name(tool),
        method=method.upper(),
        path=request_path,
        fixed_query=fixed_query,
        operation_id=operation_id,
        title=title,
        title_from_description=summary is None and title is not None,
        description=text or key,
        parameters=params,
        body=body,
        response=response,
        security=security_requirements(op.get("security", root_security), schemes),
        tags=tuple(t for t in op.get("tags", []) if isinstance(t, str)),
        deprecated=op.get("deprecated") is True,
        hints=hints.infer(method, request_path, operation_id, summary),
        naive_datetimes=naive and response.kind == "json",
        inline_bytes=curation.inline_bytes(key) if curation is not None else None,
    )


def _operation_id(op: dict[str, Any]) -> str | None:
    found = op.get("operationId")
    return found if isinstance(found, str) else None


def _title(op: dict[str, Any]) -> str | None:
    """An operation's title: its summary when that is one sentence, else the first sentence of its
    summary or, without one, of its description (naming spells run-together operationIds with it)."""
    summary, description = nonblank(op.get("summary")), nonblank(op.get("description"))
    if summary and prose.is_one_sentence(summary):
        return prose.summary_line(summary) or None
    return prose.title_from(summary or description)
