"""File arguments: the bytes of a binary request body, or of a multipart file part, given by reference
(`{"uri": "file:///...", "mimeType": "..."}` or an http(s) URL) instead of as base64 or text.

The URI comes from the client, and so from a model that may have read anything: it is hostile until
proven otherwise. The server reads only what the operator allowed, and is off by default:
- `<PREFIX>_FILE_ROOTS`: the folders (separated by the platform's path separator) whose files may be
  read. A path is resolved whole (`..`, symbolic links, percent-escapes) before it is compared, by
  device and inode, with each root and its ancestors, so neither a link nor a case-insensitive name
  leads out; only `file:///path` and `file://localhost/path` are local. The file is opened without
  blocking and must be a regular file (a device such as /dev/zero or a FIFO would never end).
- `<PREFIX>_FILE_HOSTS`: the hosts (comma-separated `host` or `host:port`) whose http(s) URLs may be
  fetched: with no credential, cookie or header of the operator's, no redirect to a host not listed,
  within the call's timeout.
Either way at most `<PREFIX>_MAX_RESPONSE_BYTES` are read (the cap of an upstream answer), and an error
names the URI and the reason, never what the file holds.
"""

from __future__ import annotations

import errno
import mimetypes
import os
import posixpath
import re
import stat
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote, urlsplit

import anyio
import httpx2
from pydantic import BaseModel, ConfigDict, Field

from .config import Settings
from .results import UpstreamError
from .work import Overtime, off_loop

MAX_REDIRECTS = 5
URI_SHOWN = 200  # characters of a URI an error message repeats
MEDIA_TYPE = re.compile(r"[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]*/[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]*")


class FileReference(BaseModel):
    """A file the server reads itself, by URI (from the folders and hosts its operator allows)."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    uri: str = Field(description="file:///absolute/path or an http(s) URL", min_length=1)
    mime_type: str | None = Field(
        default=None, alias="mimeType", description="The file's media type; guessed from its name when not given"
    )


class FileRefused(UpstreamError):
    """A reference the server will not read; the message names the URI and the setting to change."""


@dataclass(frozen=True)
class Upload:
    """A file read by reference: its bytes, media type and name."""

    data: bytes
    mime_type: str
    filename: str


def is_reference(value: Any) -> bool:
    """A file reference as a tool received it: the model, or its dump (a multipart field)."""
    return isinstance(value, FileReference) or (isinstance(value, dict) and isinstance(value.get("uri"), str))


async def read(settings: Settings, value: Any, limit: int | None = None) -> Upload:
    """The file `value` (a FileReference, or its dump) refers to, read within the call's timeout; at
    most `limit` bytes (default: `<PREFIX>_MAX_RESPONSE_BYTES`)."""
    if not isinstance(value, FileReference):  # a multipart field's dump: its model is the spec's, open to more
        mime_type = value.get("mimeType")
        value = FileReference.model_validate(
            {"uri": value["uri"], "mimeType": mime_type if isinstance(mime_type, str) else None}
        )
    reference = value
    uri = reference.uri
    shown = uri[:URI_SHOWN]
    _media_type(reference.mime_type, shown)
    try:
        parts = urlsplit(uri)
        url = httpx2.URL(uri) if parts.scheme.lower() in ("http", "https") else None
    except (ValueError, httpx2.InvalidURL):
        raise FileRefused(f"file reference {shown!r}: not a valid URI") from None
    limit = settings.max_response_bytes if limit is None else limit
    if parts.scheme.lower() == "file":
        data, name = await _read_local(settings, parts, shown, limit)
    elif url is not None:
        data, name, served = await _fetch(settings, url, shown, limit)
        if not reference.mime_type and served and MEDIA_TYPE.fullmatch(served):
            reference = reference.model_copy(update={"mime_type": served})
    else:
        raise FileRefused(f"file reference {shown!r}: only file:// and http(s):// URIs are read")
    guessed = mimetypes.guess_type(name, strict=False)[0]
    return Upload(data, reference.mime_type or guessed or "application/octet-stream", name or "file")


def _media_type(value: str | None, shown: str) -> str | None:
    """A given media type, checked: it becomes a header line, so nothing but `type/subtype` (RFC 6838's
    characters) may reach one."""
    if value is None or MEDIA_TYPE.fullmatch(value):
        return value
    raise FileRefused(f"file reference {shown!r}: mimeType is not a media type (type/subtype)")


async def resolve_body(
    settings: Settings, base64_body: Any, multipart: Any, file_fields: tuple[str, ...], content_type: str | None
) -> tuple[Any, Any, str | None]:
    """The raw body, multipart fields and content type with every file reference read: a raw body
    becomes bytes, sent as the reference's media type when it names one (or when the spec's is a
    wildcard); a multipart file field becomes an `Upload` (text given for one is its UTF-8 bytes).
    The files of one call share one cap, `<PREFIX>_MAX_RESPONSE_BYTES`."""
    room = settings.max_response_bytes
    if is_reference(base64_body):
        upload = await read(settings, base64_body, room)
        given = base64_body.mime_type if isinstance(base64_body, FileReference) else None
        if given or not content_type or "*" in content_type:
            content_type = upload.mime_type
        base64_body = upload.data
    if multipart is not None and file_fields:
        fields = (
            multipart.model_dump(by_alias=True, exclude_unset=True) if isinstance(multipart, BaseModel) else multipart
        )
        if isinstance(fields, dict):
            for name in file_fields:
                value = fields.get(name)
                if is_reference(value):
                    fields[name] = upload = await read(settings, value, room)
                    room -= len(upload.data)
                elif isinstance(value, str):
                    fields[name] = Upload(value.encode(), "application/octet-stream", name)
            multipart = fields
    return base64_body, multipart, content_type


# -- local files ---------------------------------------------------------------------------------


def roots_variable(settings: Settings) -> str:
    return f"{settings.env_prefix}_FILE_ROOTS"


def hosts_variable(settings: Settings) -> str:
    return f"{settings.env_prefix}_FILE_HOSTS"


async def _read_local(settings: Settings, parts: Any, shown: str, limit: int) -> tuple[bytes, str]:
    variable = roots_variable(settings)
    roots = [root for root in os.environ.get(variable, "").split(os.pathsep) if root.strip()]
    if not roots:
        raise FileRefused(
            f"file reference {shown!r}: reading local files is off; set {variable} to the folders allowed"
        )
    if parts.netloc not in ("", "localhost"):  # file://host/share is another machine's file
        raise FileRefused(f"file reference {shown!r}: only local files (file:///path) are read")
    try:
        path = unquote(parts.path, errors="strict")
    except UnicodeDecodeError:
        raise FileRefused(f"file reference {shown!r}: not a valid UTF-8 path") from None
    if "\x00" in path or not posixpath.isabs(path) or parts.query or parts.fragment:
        raise FileRefused(f"file reference {shown!r}: not a file:///absolute/path")
    what = f"reading {shown}"
    try:
        return await off_loop(what, settings.timeout, _read_file, path, roots, variable, shown, limit)
    except Overtime as exc:
        raise FileRefused(str(exc)) from None


def _read_file(path: str, roots: list[str], variable: str, shown: str, limit: int) -> tuple[bytes, str]:
    """The bytes of the regular file `path` inside one of `roots`, at most `limit` of them."""
    real = os.path.realpath(path)  # `..` and every symbolic link, resolved before the comparison
    if not _inside(real, roots):
        raise FileRefused(f"file reference {shown!r}: outside the folders {variable} allows")
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
    try:
        descriptor = os.open(real, flags)  # without blocking: opening a FIFO would wait for a writer
    except OSError as exc:
        reason = (
            "no such file"
            if exc.errno == errno.ENOENT
            else f"cannot be opened ({errno.errorcode.get(exc.errno or 0, 'error')})"
        )
        raise FileRefused(f"file reference {shown!r}: {reason}") from None
    with os.fdopen(descriptor, "rb", buffering=0) as file:
        opened = f"/proc/self/fd/{file.fileno()}"  # Linux: the file opened, whatever moved since realpath
        if os.path.islink(opened) and not _inside(os.readlink(opened), roots):
            raise FileRefused(f"file reference {shown!r}: outside the folders {variable} allows")
        status = os.fstat(file.fileno())
        if not stat.S_ISREG(status.st_mode):  # a device, FIFO or socket may never end, or block
            raise FileRefused(f"file reference {shown!r}: not a regular file")
        if status.st_size > limit:
            raise FileRefused(f"file reference {shown!r}: {status.st_size} bytes, over the {limit} byte cap")
        data = file.read(limit + 1)  # a file that grew since fstat is still cut at the cap
    if len(data) > limit:
        raise FileRefused(f"file reference {shown!r}: over the {limit} byte cap")
    return data, os.path.basename(real)


def _inside(real: str, roots: list[str]) -> bool:
    """Whether `real` (resolved) is one of `roots` or below one: compared by device and inode, so a
    root spelled in another case on a case-insensitive file system, or through a link, still matches."""
    allowed = set()
    for root in roots:
        try:
            status = os.stat(os.path.realpath(root.strip()))
        except OSError:
            continue
        allowed.add((status.st_dev, status.st_ino))
    current = real
    while True:
        try:
            found = os.stat(current)
            if (found.st_dev, found.st_ino) in allowed:
                return True
        except OSError:  # not there (yet): its folder decides, and opening it then fails
            pass
        parent = os.path.dirname(current)
        if parent == current:
            return False
        current = parent


# -- URLs ----------------------------------------------------------------------------------------


def _allowed_hosts(settings: Settings) -> set[tuple[str, int | None]]:
    hosts: set[tuple[str, int | None]] = set()
    for entry in os.environ.get(hosts_variable(settings), "").split(","):
        entry = entry.strip().lower()
        if not entry:
            continue
        host, colon, port = entry.rpartition(":") if entry.count(":") == 1 else ("", "", "")
        if colon and port.isdigit():
            hosts.add((host.strip("[]"), int(port)))
        else:
            hosts.add((entry.strip("[]"), None))
    return hosts


def _host_allowed(url: httpx2.URL, hosts: set[tuple[str, int | None]]) -> bool:
    host = url.host.lower()
    return (host, None) in hosts or (host, url.port or (443 if url.scheme == "https" else 80)) in hosts


async def _fetch(settings: Settings, url: httpx2.URL, shown: str, limit: int) -> tuple[bytes, str, str | None]:
    """The body of `url`, its file name and its served media type. A bare request on a client of its
    own (no cookie jar shared with the upstream API, none of its headers or credentials); a redirect
    is followed only to a listed host, never from https to http."""
    variable = hosts_variable(settings)
    hosts = _allowed_hosts(settings)
    if not hosts:
        raise FileRefused(f"file reference {shown!r}: fetching URLs is off; set {variable} to the hosts allowed")
    timeout = settings.timeout
    try:
        with anyio.fail_after(timeout):
            async with httpx2.AsyncClient(
                timeout=timeout, follow_redirects=False, headers={"user-agent": settings.user_agent}, trust_env=True
            ) as client:
                for _ in range(MAX_REDIRECTS + 1):
                    if url.userinfo or url.scheme not in ("http", "https"):
                        raise FileRefused(f"file reference {shown!r}: not an http(s) URL without user info")
                    if not _host_allowed(url, hosts):
                        raise FileRefused(f"file reference {shown!r}: host {url.host[:100]!r} is not in {variable}")
                    # Asked for as it is: a file is read raw, so a compressed answer cannot expand past the cap.
                    request = client.build_request("GET", url, headers={"accept-encoding": "identity"})
                    response = await client.send(request, stream=True)
                    try:
                        if response.is_redirect:
                            target = url.join(response.headers.get("location", ""))
                            if url.scheme == "https" and target.scheme != "https":
                                raise FileRefused(f"file reference {shown!r}: redirected from https to http")
                            url = target
                            continue
                        if response.status_code != 200:
                            raise FileRefused(f"file reference {shown!r}: HTTP {response.status_code}")
                        declared = response.headers.get("content-length", "")
                        if declared.isdigit() and int(declared) > limit:
                            raise FileRefused(f"file reference {shown!r}: {declared} bytes, over the {limit} byte cap")
                        data = await _read_raw(response, limit, shown)
                        served = response.headers.get("content-type", "").split(";")[0].strip() or None
                        return data, posixpath.basename(url.path), served
                    finally:
                        await response.aclose()
                raise FileRefused(f"file reference {shown!r}: more than {MAX_REDIRECTS} redirects")
    except TimeoutError:
        raise FileRefused(f"file reference {shown!r}: not read within {timeout:g}s") from None
    except httpx2.HTTPError as exc:
        raise FileRefused(f"file reference {shown!r}: could not be fetched ({type(exc).__name__})") from None


async def _read_raw(response: httpx2.Response, limit: int, shown: str) -> bytes:
    """The body as sent, at most `limit` bytes; one sent with a Content-Encoding though the request
    asked for none is refused rather than decoded (where it could expand past the cap)."""
    if response.headers.get("content-encoding", "identity").strip().lower() not in ("", "identity"):
        raise FileRefused(f"file reference {shown!r}: answered with a Content-Encoding, not the file as it is")
    chunks, size = [], 0
    async for chunk in response.aiter_raw():
        size += len(chunk)
        if size > limit:
            raise FileRefused(f"file reference {shown!r}: over the {limit} byte cap")
        chunks.append(chunk)
    return b"".join(chunks)
