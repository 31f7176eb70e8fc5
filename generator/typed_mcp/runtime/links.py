"""Big answers: past a tool's inline budget, a read (GET) tool answers with a preview and a link.

An answer whose JSON is over the tool's budget (`INLINE_BYTES` of the package, the config's
`inline_bytes`; `<PREFIX>_INLINE_BYTES` overrides it for every tool) would fill an agent's context
with data it rarely reads whole. Instead the result holds:

- `structuredContent`: the answer with its lists cut to their first items until it fits (each
  outermost list keeping a share of the budget in proportion to its size),
  checked against the tool's outputSchema (a strict client validates it); when no such cut fits
  the budget and the schema (a single huge string, a `minItems`), the result is an `isError` without
  structuredContent, which every client accepts, and the link below;
- `content`: a line saying what was cut and how to get the rest, the preview as JSON text, and a
  `resource_link` to the whole answer;
- `_meta["io.github.typed-mcp/truncated"]`: the bytes of the whole answer, the budget, and each cut
  (its path, the items kept, the items there were).

The link names no stored answer: its URI holds the call itself (tool, arguments, `fields`, expiry)
sealed by the MCP SDK's request-state codec (AES-256-GCM under a key derived with HKDF-SHA256: the
client can neither read nor alter it). `resources/read` of it unseals the call and makes it again,
so any replica that holds the same key (`<PREFIX>_LINK_KEY`, 32 bytes or more) serves it, and
nothing is kept between requests. A call that writes (any method but GET) is never made twice: its
answer stays inline whatever its size.
"""

from __future__ import annotations

import json
import logging
import os
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

from mcp.server.request_state import AESGCMRequestStateCodec, InvalidRequestState
from mcp.shared.exceptions import MCPError
from mcp.types import (
    INVALID_PARAMS,
    BlobResourceContents,
    CallToolResult,
    ContentBlock,
    EmbeddedResource,
    ImageContent,
    ReadResourceResult,
    ResourceLink,
    TextContent,
    TextResourceContents,
)

from .arguments import LinearValidator
from .contracts import INLINE_BYTES, OPERATION, TRUNCATED
from .results import error_result

logger = logging.getLogger(__name__)

LINK_SECONDS = 3600  # how long a link can be read; past it, the call is made again through the tool
MIN_KEY_BYTES = 32  # the SDK codec's floor: a shorter secret is guessable
MAX_CUTS = 64  # lists cut before giving up on a preview (an answer of nested lists takes one per level)
SCHEME = "answer"


class Links:
    """The inline budget of each tool, and the sealed links to whole answers of `package`."""

    def __init__(self, package: str, env_prefix: str, budgets: Mapping[str, int], default: int = INLINE_BYTES) -> None:
        self.package = package
        self.env_prefix = env_prefix
        self.budgets = budgets
        self.default = default
        key = os.environ.get(f"{env_prefix}_LINK_KEY", "")
        # Without one, a key of this process: its links work, but only here and until it stops (said
        # once, when the first link is made).
        self.ephemeral = not key
        key = key or os.urandom(MIN_KEY_BYTES).hex()
        if len(key.encode()) < MIN_KEY_BYTES:
            raise ValueError(
                f"{env_prefix}_LINK_KEY is {len(key.encode())} bytes: give {MIN_KEY_BYTES} or more of secret "
                'randomness (python -c "import secrets; print(secrets.token_hex(32))")'
            )
        self.codec = AESGCMRequestStateCodec([key])
        self.secret = key  # the confirmations' key is derived from it (`confirm.py`)
        self.prefix = f"{SCHEME}://{package}/"

    def budget(self, name: str) -> int:
        """The bytes of JSON the tool `name` answers inline."""
        variable = f"{self.env_prefix}_INLINE_BYTES"
        given = os.environ.get(variable, "").strip()
        if given:
            if not given.isdigit() or int(given) < 1:
                raise ValueError(f"{variable}={given!r}: give a positive number of bytes")
            return int(given)
        return self.budgets.get(name, self.default)

    def answer(
        self, tool: Mapping[str, Any] | None, arguments: Mapping[str, Any], result: CallToolResult, fields: Any = None
    ) -> CallToolResult:
        """`result` of the tool `tool` (its tools/list definition) called with `arguments`, as it is
        when it fits the tool's budget, else a preview with a link (see the module's docstring)."""
        structured = result.structured_content
        binary = _binary(result) if structured is None else None
        if tool is None or result.is_error or (structured is None and binary is None) or not _reads(tool):
            return result
        try:
            budget = self.budget(tool["name"])
        except ValueError as exc:  # a setting the runtime cannot use: said, rather than ignored
            return error_result(str(exc))
        if binary is not None:
            return self._binary_answer(tool, arguments, result, binary, budget)
        size = _size(structured)
        if size <= budget:
            return result
        link = self.link(tool, arguments, fields, size)
        schema = tool.get("outputSchema") if fields is None else None
        preview = _preview(structured, size, budget, schema)
        report: dict[str, Any] = {"bytes": size, "budget": budget, "uri": link.uri}
        meta = {**(result.meta or {}), TRUNCATED: report}
        whole = f"read the whole answer ({size} bytes of JSON) with resources/read of {link.uri}"
        if preview is None:
            text = (
                f"This answer is {size} bytes of JSON, over the {budget} bytes this tool answers inline, and "
                f"no shorter form of it fits that and the tool's outputSchema: {whole} (valid {LINK_SECONDS} s; "
                "after that, call the tool again)"
            )
            return CallToolResult(content=[TextContent(type="text", text=text), link], is_error=True, _meta=meta)
        value, cuts = preview
        report["cuts"] = cuts
        said = "; ".join(f"{_where(cut['path'])}: the first {cut['kept']} of {cut['total']} items" for cut in cuts)
        note = (
            f"This answer is {size} bytes of JSON, over the {budget} bytes this tool answers inline, so it is cut "
            f"to {said}. To see everything, {whole} (valid {LINK_SECONDS} s), or ask for less."
        )
        content: list[ContentBlock] = [
            TextContent(type="text", text=note),
            TextContent(type="text", text=json.dumps(value)),
            link,
        ]
        return CallToolResult(content=content, structured_content=value, _meta=meta)

    def called(
        self, tools: Mapping[str, Mapping[str, Any]], arguments: Mapping[str, Any], result: CallToolResult
    ) -> CallToolResult:
        """Discovery mode's `call_tool` result (`arguments`: its name, arguments and fields), as `answer` gives it."""
        name, inner = arguments.get("name"), arguments.get("arguments", {})
        if not isinstance(name, str) or not isinstance(inner, dict):
            return result
        return self.answer(tools.get(name), inner, result, arguments.get("fields"))

    def _binary_answer(
        self,
        tool: Mapping[str, Any],
        arguments: Mapping[str, Any],
        result: CallToolResult,
        binary: tuple[str, str],
        budget: int,
    ) -> CallToolResult:
        """A binary answer (an image, a file) whose base64 is over the budget: a line saying so and a
        link to it, which resources/read gives whole (as a blob)."""
        mime_type, blob = binary
        if len(blob) <= budget:
            return result
        size = len(blob) // 4 * 3 - blob[-2:].count("=")  # the bytes the base64 holds
        link = self.link(tool, arguments, None, size, mime_type)
        meta = {**(result.meta or {}), TRUNCATED: {"bytes": len(blob), "budget": budget, "uri": link.uri}}
        text = (
            f"This answer is {size} bytes of {mime_type} ({len(blob)} characters of base64), over the {budget} "
            f"bytes this tool answers inline: read it with resources/read of {link.uri} (valid {LINK_SECONDS} s; "
            "after that, call the tool again)"
        )
        return CallToolResult(content=[TextContent(type="text", text=text), link], _meta=meta)

    def serves(self, tools: Sequence[Mapping[str, Any]]) -> bool:
        """Some of `tools` may answer with a link (so the server serves resources/read)."""
        return any(_reads(tool) for tool in tools)

    def link(
        self,
        tool: Mapping[str, Any],
        arguments: Mapping[str, Any],
        fields: Any,
        size: int,
        mime_type: str = "application/json",
    ) -> ResourceLink:
        if self.ephemeral:
            self.ephemeral = False
            logger.warning(
                "%s_LINK_KEY is not set: links to big answers are sealed with a key of this process only "
                "(set the same secret of %d bytes or more on every replica)",
                self.env_prefix,
                MIN_KEY_BYTES,
            )
        kind = "JSON" if mime_type == "application/json" else mime_type
        call = {"p": self.package, "t": tool["name"], "a": arguments, "e": int(time.time()) + LINK_SECONDS}
        if fields is not None:
            call["f"] = fields
        token = self.codec.seal(json.dumps(call, separators=(",", ":"), sort_keys=True).encode())
        return ResourceLink(
            type="resource_link",
            uri=self.prefix + token,
            name=f"{tool['name']} answer",
            title=f"The whole answer of {tool['name']}",
            description=f"The whole {kind} answer of {tool['name']}, made again when read (for {LINK_SECONDS} s)",
            mime_type=mime_type,
            size=size,
        )

    def owns(self, uri: str) -> bool:
        return uri.startswith(self.prefix)

    def call_of(self, uri: str) -> tuple[str, dict[str, Any], Any]:
        """The tool, arguments and fields a link of this server names; an MCPError for one that this
        server did not seal unaltered with its key, or that has expired."""
        try:
            call = json.loads(self.codec.unseal(uri[len(self.prefix) :]))
        except (InvalidRequestState, ValueError):
            raise MCPError(
                code=INVALID_PARAMS,
                message=(
                    f"{uri[:120]}: not a link this server made (altered, forged, or sealed with another key: "
                    f"every replica needs the same {self.env_prefix}_LINK_KEY); call the tool again"
                ),
            ) from None
        if not isinstance(call, dict) or call.get("p") != self.package:
            raise MCPError(code=INVALID_PARAMS, message=f"{uri[:120]}: a link of another server")
        if not isinstance(call.get("e"), int) or call["e"] < time.time():
            raise MCPError(code=INVALID_PARAMS, message=f"{uri[:120]}: the link has expired: call the tool again")
        return call["t"], call["a"], call.get("f")

    async def read(
        self,
        uri: str,
        refusal: Callable[[str], CallToolResult | None],
        call: Callable[[str, dict[str, Any]], Awaitable[CallToolResult]],
        select: Callable[[CallToolResult, str | None], Awaitable[CallToolResult]],
    ) -> ReadResourceResult:
        """resources/read of a link: the tool it names, unless `refusal` refuses it to this request,
        `call`ed again with the same arguments (and trimmed by `select` to its `fields`), its answer whole."""
        name, arguments, fields = self.call_of(uri)
        refused = refusal(name)
        return self.contents(uri, refused or await select(await call(name, arguments), fields))

    @staticmethod
    def contents(uri: str, result: CallToolResult) -> ReadResourceResult:
        """The whole answer of a link, from the call made again; its failure as an MCPError."""
        binary = _binary(result) if result.structured_content is None and not result.is_error else None
        if binary is not None:
            return ReadResourceResult(contents=[BlobResourceContents(uri=uri, mime_type=binary[0], blob=binary[1])])
        if result.is_error or result.structured_content is None:
            text = " ".join(block.text for block in result.content if isinstance(block, TextContent))
            raise MCPError(code=INVALID_PARAMS, message=f"the call behind {uri[:120]} failed: {text[:2000]}")
        text = json.dumps(result.structured_content, ensure_ascii=False)
        return ReadResourceResult(contents=[TextResourceContents(uri=uri, mime_type="application/json", text=text)])


def _binary(result: CallToolResult) -> tuple[str, str] | None:
    """The media type and base64 of a binary answer (`results.py` gives one as an image or an embedded
    blob, alone); None for any other result."""
    if len(result.content) != 1:
        return None
    block = result.content[0]
    if isinstance(block, ImageContent):
        return block.mime_type, block.data
    if isinstance(block, EmbeddedResource) and isinstance(block.resource, BlobResourceContents):
        return block.resource.mime_type or "application/octet-stream", block.resource.blob
    return None


def _reads(tool: Mapping[str, Any]) -> bool:
    """The tool's operation is a GET: made again, it changes nothing."""
    operation = (tool.get("_meta") or {}).get(OPERATION, "")
    return isinstance(operation, str) and operation.startswith("GET ")


def _size(value: Any) -> int:
    return len(json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode())


def _where(path: list[Any]) -> str:
    return ".".join(str(part) for part in path) or "(the answer)"


def _preview(
    value: Any, total: int, budget: int, schema: Mapping[str, Any] | None
) -> tuple[Any, list[dict[str, Any]]] | None:
    """`value` (`total` bytes of JSON) with its lists cut to their first items until its JSON
    fits `budget` bytes and it still validates against `schema` (when given), with the cuts made;
    None when none does."""
    cuts: list[dict[str, Any]] = []
    try:
        for _ in range(MAX_CUTS):
            if total <= budget:
                break
            lists: list[tuple[list[Any], list[Any]]] = []
            _outer_lists(value, [], lists)
            if not lists:
                return None
            if len(lists) == 1:  # the answer is this list and what surrounds it (the usual page shape)
                sizes = [total - _size(_replace(value, lists[0][0], [])) + 2]
            else:
                sizes = [_size(items) for _, items in lists]
            # Each list keeps its share of the bytes left for lists, in proportion to its size (a
            # `data` list and the `table` of the same rows are cut alike): its first items that fit,
            # and at least one (a list the schema says is never empty stays valid more often).
            share = (budget - (total - sum(sizes))) / sum(sizes)
            for (path, items), size in zip(lists, sizes, strict=True):
                kept = max(1, _fitting(items, int(size * share) - 2))
                value = _replace(value, path, items[:kept])
                cuts.append({"path": path, "kept": kept, "total": len(items)})
            total = _size(value)
        else:
            return None
    except RecursionError:
        return None
    if schema is not None:
        try:
            if not LinearValidator(schema).is_valid(value):
                return None
        except Exception as exc:  # fail closed: a preview that cannot be checked is not given
            logger.info("answer preview not checked: %s", type(exc).__name__)
            return None
    merged: dict[str, dict[str, Any]] = {}
    for cut in cuts:  # a list cut twice is said once, with its first length
        key = json.dumps(cut["path"])
        merged[key] = {**cut, "total": merged.get(key, cut)["total"]}
    return value, list(merged.values())


def _fitting(items: list[Any], room: int) -> int:
    """The most first items of `items` whose JSON, commas included, takes `room` bytes or fewer:
    searched by doubling then halving, so that only prefixes about that size are ever encoded."""

    def fits(count: int) -> bool:
        return _size(items[:count]) - 2 <= room

    if not fits(1):
        return 0
    low, high = 1, 2  # fits(low); high is past the end or does not fit
    while high <= len(items) and fits(high):
        low, high = high, high * 2
    high = min(high, len(items) + 1)
    while high - low > 1:
        middle = (low + high) // 2
        low, high = (middle, high) if fits(middle) else (low, middle)
    return low


def _outer_lists(value: Any, path: list[Any], found: list[tuple[list[Any], list[Any]]]) -> None:
    """Every list of two items or more in `value` that no such list holds, with its path: the lists
    cut first, and nothing inside them needs walking (the JSON of the items is measured by the C
    encoder, not here)."""
    if isinstance(value, list):
        if len(value) > 1:
            found.append((path, value))
        elif value:
            _outer_lists(value[0], [*path, 0], found)
    elif isinstance(value, dict):
        for key, item in value.items():
            _outer_lists(item, [*path, key], found)


def _replace(value: Any, path: list[Any], new: Any) -> Any:
    """`value` with what `path` names replaced by `new` (the containers on the way copied)."""
    if not path:
        return new
    head, rest = path[0], path[1:]
    if isinstance(value, dict):
        return {**value, head: _replace(value[head], rest, new)}
    copied = list(value)
    copied[head] = _replace(value[head], rest, new)
    return copied
