"""Step 1: read an OpenAPI document from a file or a live URL, exactly as published.

The raw bytes are kept next to the parsed document: they become the committed snapshot and
their sha256 is what the drift check compares.
"""

from __future__ import annotations

import hashlib
import ipaddress
import json
import math
import re
import socket
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit, urlunsplit

import httpcore
import httpx
import yaml

from typed_mcp.errors import FetchError, SpecError
from typed_mcp.runtime.contracts import CREDENTIAL_NAME

DEFAULT_TIMEOUT = 30.0
DEFAULT_MAX_BYTES = 64 * 1024 * 1024  # big specs reach 13 MB; leave room, refuse runaway bodies.
RETRIES = 3
RETRY_STATUSES = {500, 502, 503, 504}


@dataclass(frozen=True)
class LoadedSpec:
    document: dict[str, Any]
    raw: bytes
    origin: str  # a path, or a URL stripped of credentials and query
    url: str | None  # the URL it was fetched from, when live
    base_dir: Path | None  # the folder relative `$ref`s resolve from, for files
    format: str  # "json" or "yaml"

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.raw).hexdigest()


def is_url(source: str) -> bool:
    return source.startswith(("http://", "https://"))


def redact_url(url: str) -> str:
    """The URL without user info, query or fragment: safe to print and to record."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if parts.port:
        host = f"{host}:{parts.port}"
    return urlunsplit((parts.scheme, host, parts.path, "", ""))


def url_credentials(url: str) -> list[str]:
    """What in a URL holds a credential, by name, never by value: its user info, and each query or
    fragment parameter whose name looks like a credential (`?access_token=`, `#id_token=`)."""
    parts = urlsplit(url)
    found = ["user info"] if parts.username or parts.password else []
    for part in (parts.query, parts.fragment):
        names = [name for name, _ in parse_qsl(part, keep_blank_values=True)]
        found += [f"parameter {name!r}" for name in dict.fromkeys(names) if CREDENTIAL_NAME.search(name)]
    return found


def shown(source: str) -> str:
    """A file or URL as a message may show it: a URL without user info, query or fragment."""
    return redact_url(source) if is_url(source) else source


def load(
    source: str,
    *,
    headers: dict[str, str] | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    max_bytes: int = DEFAULT_MAX_BYTES,
) -> LoadedSpec:
    if is_url(source):
        raw, content_type = fetch(source, headers=headers or {}, timeout=timeout, max_bytes=max_bytes)
        origin = redact_url(source)
        fmt = _guess_format(urlsplit(source).path, content_type, raw)
        document = parse(raw, origin=origin, fmt=fmt)
        return LoadedSpec(document, raw, origin, source, None, fmt)
    path = Path(source)
    raw = read_file(path, max_bytes, source)
    fmt = _guess_format(path.name, "", raw)
    document = parse(raw, origin=source, fmt=fmt)
    return LoadedSpec(document, raw, source, None, path.resolve().parent, fmt)


def read_file(path: Path, max_bytes: int, source: str) -> bytes:
    """A file's bytes, reading no further than the cap (a huge file, or one that grows, costs no
    more than the cap's worth of memory)."""
    if not path.is_file():
        raise SpecError("no such file", source=source)
    with path.open("rb") as handle:
        raw = handle.read(max_bytes + 1)
    if len(raw) > max_bytes:
        raise SpecError(f"file is larger than the {max_bytes} byte cap", source=source)
    return raw


MAX_REDIRECTS = 5
_REDIRECT_STATUSES = {301, 302, 303, 307, 308}


def fetch(
    url: str, *, headers: dict[str, str], timeout: float, max_bytes: int, public_only: bool = False
) -> tuple[bytes, str]:
    """GET a spec with retries on connection errors and 5xx; never prints header values.
    `public_only`: every connection (each redirect hop's) goes to a global address, checked on
    every address the host name resolves to, and then made to that checked address."""
    shown = redact_url(url)
    last_error = ""
    # An environment proxy would make the connection in our place, unchecked: not with public_only.
    guarded: dict[str, Any] = {"transport": _PublicOnlyTransport(), "trust_env": False} if public_only else {}
    with httpx.Client(timeout=timeout, follow_redirects=False, **guarded) as client:
        for attempt in range(RETRIES):
            if attempt:
                time.sleep(0.5 * 2 ** (attempt - 1))
            try:
                return _get(client, url, headers, max_bytes)
            except _Retry as exc:
                last_error = str(exc)
            except httpx.TimeoutException:
                last_error = f"timed out after {timeout:g}s"
            except httpx.TransportError as exc:
                last_error = f"connection failed ({type(exc).__name__})"
            except (httpx.HTTPError, httpx.InvalidURL) as exc:  # an undecodable body, an unusable Location
                raise FetchError(f"{shown}: {type(exc).__name__}") from None
    raise FetchError(f"{shown}: {last_error} (tried {RETRIES} times)")


class _Retry(Exception):
    """An answer worth asking again for (a 5xx)."""


def _get(client: httpx.Client, url: str, headers: dict[str, str], max_bytes: int) -> tuple[bytes, str]:
    """One GET, following at most MAX_REDIRECTS redirects. The `-H` headers go to the first URL's
    origin only: a redirect to another origin (scheme, host or port) is followed without any of
    them, and they are not sent again for the rest of the chain."""
    shown = redact_url(url)
    origin = _origin(httpx.URL(url))
    for _ in range(MAX_REDIRECTS + 1):
        target = httpx.URL(url)
        sent = headers if _origin(target) == origin else {}
        if not sent:
            headers = {}  # once off the origin, never again (not even when redirected back)
        with client.stream("GET", target, headers=sent) as response:
            if response.status_code in _REDIRECT_STATUSES and response.headers.get("location"):
                url = str(target.join(response.headers["location"]))
                if not url.startswith(("http://", "https://")):
                    raise FetchError(f"{shown}: redirected to a URL that is not http(s)")
                continue
            if response.status_code in RETRY_STATUSES:
                raise _Retry(f"HTTP {response.status_code}")
            if not response.is_success:
                raise FetchError(f"{shown}: HTTP {response.status_code} {response.reason_phrase}")
            return _read(response, shown, max_bytes), response.headers.get("content-type", "")
    raise FetchError(f"{shown}: more than {MAX_REDIRECTS} redirects")


def _read(response: httpx.Response, shown: str, max_bytes: int) -> bytes:
    """The decoded body, reading stopped once it passes `max_bytes`."""
    declared = response.headers.get("content-length")
    if declared and declared.isdigit() and int(declared) > max_bytes:
        raise FetchError(f"{shown}: response is {declared} bytes, over the {max_bytes} byte cap")
    chunks: list[bytes] = []
    size = 0
    for chunk in response.iter_bytes():
        size += len(chunk)
        if size > max_bytes:
            raise FetchError(f"{shown}: response is over the {max_bytes} byte cap")
        chunks.append(chunk)
    return b"".join(chunks)


def _origin(url: httpx.URL) -> tuple[str, str, int | None]:
    default = {"http": 80, "https": 443}.get(url.scheme)
    return url.scheme, url.host, url.port or default


class _PublicOnlyBackend(httpcore.SyncBackend):
    """Connects only to global addresses: never loopback, private, link-local (169.254.169.254, the
    cloud metadata service), shared, reserved or multicast ones."""

    def connect_tcp(self, host: str, port: int, *args: Any, **kwargs: Any) -> httpcore.NetworkStream:
        return super().connect_tcp(public_address(host, port), port, *args, **kwargs)


def public_address(host: str, port: int) -> str:
    """The first address `host` resolves to, when every one of them is global (one private answer
    among public ones is a DNS trick, not an accident); else a FetchError."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError):
        raise FetchError(f"{host}: cannot resolve the host name") from None
    addresses = [str(info[4][0]) for info in infos]
    for address in addresses:
        ip = ipaddress.ip_address(address.split("%", 1)[0])
        if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped:
            ip = ip.ipv4_mapped
        if not ip.is_global or ip.is_multicast:
            raise FetchError(
                f"{host} resolves to {ip}, a loopback, private or link-local address: refused for a remote $ref "
                "(pass --allow-private-refs to allow it)"
            )
    if not addresses:
        raise FetchError(f"{host}: cannot resolve the host name")
    return addresses[0]


class _PublicOnlyTransport(httpx.BaseTransport):
    """An httpx transport over httpcore's connection pool, whose network backend is the one above:
    httpx's own transport has no public way to choose the backend, httpcore's pool has."""

    def __init__(self) -> None:
        self._pool = httpcore.ConnectionPool(
            ssl_context=httpx.create_ssl_context(), network_backend=_PublicOnlyBackend()
        )

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        url = httpcore.URL(
            scheme=request.url.raw_scheme, host=request.url.raw_host, port=request.url.port, target=request.url.raw_path
        )
        core = httpcore.Request(
            request.method, url, headers=request.headers.raw, content=request.stream, extensions=request.extensions
        )
        try:
            answer = self._pool.handle_request(core)
        except httpcore.TimeoutException as exc:
            raise httpx.TimeoutException(str(exc), request=request) from None
        except (httpcore.NetworkError, httpcore.ProtocolError, httpcore.UnsupportedProtocol) as exc:
            raise httpx.TransportError(str(exc), request=request) from None
        return httpx.Response(answer.status, headers=answer.headers, stream=_Body(answer), extensions=answer.extensions)

    def close(self) -> None:
        self._pool.close()


class _Body(httpx.SyncByteStream):
    def __init__(self, answer: httpcore.Response) -> None:
        self._answer = answer

    def __iter__(self) -> Iterator[bytes]:
        try:
            yield from self._answer.iter_stream()
        except httpcore.TimeoutException as exc:
            raise httpx.TimeoutException(str(exc)) from None
        except (httpcore.NetworkError, httpcore.ProtocolError) as exc:
            raise httpx.TransportError(str(exc)) from None

    def close(self) -> None:
        self._answer.close()


def _guess_format(name: str, content_type: str, raw: bytes) -> str:
    if name.endswith((".yaml", ".yml")) or "yaml" in content_type:
        return "yaml"
    if name.endswith(".json") or "json" in content_type:
        return "json"
    return "json" if raw.lstrip()[:1] in (b"{", b"[") else "yaml"


# The base is chosen at import: libyaml's loader when PyYAML was built with it.
class _Loader(yaml.CSafeLoader if hasattr(yaml, "CSafeLoader") else yaml.SafeLoader):  # type: ignore[misc]
    """Safe YAML without timestamp conversion: `2024-01-01` stays a string, as in JSON."""


_Loader.yaml_implicit_resolvers = {
    key: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for key, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


def parse(raw: bytes, *, origin: str, fmt: str, kind: str = "OpenAPI") -> dict[str, Any]:
    """A document's object; `kind` names what it should be in the error when it is no object."""
    head = raw.lstrip()[:200].lower()
    if head.startswith((b"<!doctype html", b"<html")) or (head.startswith(b"<") and b"<body" in raw[:4096].lower()):
        raise SpecError("got an HTML page, not an OpenAPI document (check the URL or the auth header)", source=origin)
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise SpecError(f"not UTF-8 text (byte {exc.start})", source=origin) from None
    if fmt == "json":
        try:
            document = json.loads(text, parse_constant=_not_json, parse_float=_finite, parse_int=_integer)
        except json.JSONDecodeError as exc:
            raise SpecError(f"invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}", source=origin) from None
        except _NotFinite as exc:
            raise SpecError(f"invalid JSON: {exc} is not a JSON number", source=origin) from None
        except _TooLong as exc:
            raise SpecError(f"invalid JSON: {exc}", source=origin) from None
        except RecursionError:  # the decoder's own recursion, long before MAX_DEPTH's walk could count
            raise SpecError(f"invalid JSON: nested more than {MAX_DEPTH} levels deep", source=origin) from None
        if _depth(document) > MAX_DEPTH:
            raise SpecError(f"invalid JSON: nested more than {MAX_DEPTH} levels deep", source=origin)
        if _SURROGATE_ESCAPE.search(text):
            document = _without_lone_surrogates(document)
    else:
        try:
            document = _load_yaml(text)
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            where = f" at line {mark.line + 1} column {mark.column + 1}" if mark else ""
            problem = getattr(exc, "problem", None) or "cannot parse"
            raise SpecError(f"invalid YAML{where}: {problem}", source=origin) from None
        try:
            document = _string_keys(document)
        except _NotFinite as exc:
            raise SpecError(f"{exc} is not a number JSON Schema can hold", source=origin) from None
    if not isinstance(document, dict):
        raise SpecError(_not_an_object(document, text, fmt, kind), source=origin)
    return document


# Parsing is bounded before anything walks the document, whatever its bytes say: the byte cap counts
# text, and a few hundred bytes of YAML aliases (`&a [*b, *b, ...]`, nine levels of ten) stand for a
# billion nodes; every stage after this one walks the document recursively.
MAX_DEPTH = 200  # nesting levels (real specs reach 30; the stages below recurse about twice per level)
MAX_ALIAS_NODES = 1_000_000  # nodes YAML aliases may add, about twice GitHub's whole spec (475,000)
MAX_DIGITS = 4300  # an integer's digits: Python's own int() limit (sys.int_info.default_max_str_digits)


def size(value: Any) -> int:
    """How many values `value` holds, itself included, counted level by level (no recursion)."""
    count, level = 1, [value]
    while level:
        level = [c for v in level if isinstance(v, (dict, list)) for c in (v.values() if isinstance(v, dict) else v)]
        count += len(level)
    return count


def _load_yaml(text: str) -> Any:
    """The YAML document, its node graph checked (`_yaml_bounds`) before any Python value is built."""
    loader = _Loader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        _yaml_bounds(node)
        return loader.construct_document(node)
    finally:
        loader.dispose()


def _yaml_bounds(root: yaml.Node) -> None:
    """Refuse a node graph nested past MAX_DEPTH, holding a cycle (`&a [*a]`), or whose aliases add
    more than MAX_ALIAS_NODES nodes once expanded. An alias is the node it names, reached again: it
    adds that node's whole expansion, so the sum over every second reach is exactly what the
    aliases add, counted as the graph is walked once (never expanded), and the walk stops there.
    Errors are YAML errors at the line of the collection that holds the alias."""
    done: dict[int, tuple[int, int]] = {}  # collection node -> (expanded size, height)
    open_: set[int] = set()  # the collections on the path being walked
    added = 0
    stack: list[tuple[yaml.Node, yaml.Node | None, bool]] = [(root, None, False)]
    while stack:
        node, parent, finished = stack.pop()
        if isinstance(node, yaml.ScalarNode):
            continue
        key = id(node)
        children = [n for pair in node.value for n in pair] if isinstance(node, yaml.MappingNode) else node.value
        if finished:
            open_.discard(key)
            sizes = [done[id(c)] if id(c) in done else (1, 1) for c in children]
            height = 1 + max((h for _, h in sizes), default=0)
            if height > MAX_DEPTH:
                raise _bound_error(f"nested more than {MAX_DEPTH} levels deep", node)
            done[key] = (1 + sum(size for size, _ in sizes), height)
            continue
        if key in open_:
            raise _bound_error("an alias refers to a collection that holds it (a cycle)", parent or node)
        if key in done:
            added += done[key][0]
            if added > MAX_ALIAS_NODES:
                raise _bound_error(f"aliases expand the document by more than {MAX_ALIAS_NODES} nodes", parent or node)
            continue
        open_.add(key)
        stack.append((node, parent, True))
        stack.extend((child, node, False) for child in reversed(children))  # in document order


def _bound_error(problem: str, node: yaml.Node) -> yaml.YAMLError:
    return yaml.MarkedYAMLError(problem=problem, problem_mark=node.start_mark)


def _depth(value: Any) -> int:
    """How deeply `value` nests, counted up to MAX_DEPTH + 1, level by level (no recursion: it may
    nest as deep as the decoder allowed)."""
    level = [value] if isinstance(value, (dict, list)) else []
    depth = 0
    while level and depth <= MAX_DEPTH:
        depth += 1
        level = [c for v in level for c in (v.values() if isinstance(v, dict) else v) if isinstance(c, (dict, list))]
    return depth


# What a document that is not an object is, in a user's words (a Python type name says nothing to
# someone whose YAML file came out empty).
_KINDS = ((bool, "a boolean"), ((int, float), "a number"), (str, "a string"), (list, "a list"))


def _not_an_object(document: Any, text: str, fmt: str, kind: str) -> str:
    if document is None:
        # YAML reads a file with no content (or only comments) as null: say which one it was.
        empty = fmt != "json" and yaml.compose(text, Loader=_Loader) is None
        return "the document is empty" if empty else f"the document is null, not an {kind} object"
    found = next((name for types, name in _KINDS if isinstance(document, types)), "a scalar")
    return f"the document is {found}, not an {kind} object"


def _string_keys(value: Any) -> Any:
    """YAML allows `200:` as an integer key; OpenAPI means the string "200". A non-finite number
    (`.nan`, `.inf`) is refused: JSON cannot hold one. Lone surrogates (`"\\ud800"`) become U+FFFD."""
    if isinstance(value, dict):
        return {_clean(str(k)): _string_keys(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_string_keys(v) for v in value]
    if isinstance(value, float) and not math.isfinite(value):
        raise _NotFinite(str(value))
    return _clean(value) if isinstance(value, str) else value


class _NotFinite(ValueError):
    """NaN or an infinity: JSON has no such number, and no schema keyword can use one."""


class _TooLong(ValueError):
    """An integer of more digits than Python reads (MAX_DIGITS)."""


def _integer(text: str) -> int:
    digits = len(text.lstrip("-"))
    if digits > MAX_DIGITS:
        raise _TooLong(f"an integer of {digits} digits (more than {MAX_DIGITS}) is not a number this tool reads")
    return int(text)


def _yaml_integer(loader: yaml.constructor.SafeConstructor, node: yaml.ScalarNode) -> int:
    digits = sum(c.isalnum() for c in str(node.value))  # 0x1f, 1_000: the digits and base letters
    if digits > MAX_DIGITS:
        raise yaml.constructor.ConstructorError(
            problem=f"an integer of {digits} digits (more than {MAX_DIGITS}) is not a number this tool reads",
            problem_mark=node.start_mark,
        )
    return loader.construct_yaml_int(node)


_Loader.add_constructor("tag:yaml.org,2002:int", _yaml_integer)


def _not_json(constant: str) -> Any:
    raise _NotFinite(constant)


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):  # 1e400
        raise _NotFinite(text)
    return value


# A \uD800-\uDFFF escape: JSON text may spell a lone surrogate, which no UTF-8 file can hold.
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
_SURROGATE = re.compile("[\ud800-\udfff]")


def _clean(text: str) -> str:
    return _SURROGATE.sub("\ufffd", text)


def _without_lone_surrogates(value: Any) -> Any:
    """The document with every lone surrogate (in keys and strings) replaced by U+FFFD."""
    if isinstance(value, dict):
        return {_clean(k): _without_lone_surrogates(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_without_lone_surrogates(v) for v in value]
    return _clean(value) if isinstance(value, str) else value
