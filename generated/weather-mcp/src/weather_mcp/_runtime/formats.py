"""String formats checked exactly as strict MCP clients check them.

Hand-written on purpose: strict clients (the TypeScript SDK) validate with AJV and ajv-formats in
full mode, and no Python library has AJV's exact semantics (pydantic, jsonschema and the format
packages each accept or refuse different strings). A value this server accepts or returns must be one
such a client accepts, so the rules are ported from ajv-formats, regexes character for character
(a test compares them with ajv-formats' source). The two that take text of any length (`email`,
`uri-reference`) run in the linear-time engine of `linear` (a 16 MiB URI took Python's `re` 30 s,
holding the interpreter), as does `time`'s before Python's `re` reads its parts; the others
cannot match more than a few dozen characters.
"""

from __future__ import annotations

import datetime
import re
from collections.abc import Callable
from ipaddress import IPv4Address, IPv6Address
from typing import Annotated, Any
from uuid import UUID

from pydantic import AfterValidator, BeforeValidator, TypeAdapter, WithJsonSchema
from pydantic import AwareDatetime as _AwareDatetime
from pydantic_core import PydanticCustomError

from .linear import fullmatch

# The `email` format as the strict MCP clients check it: ajv-formats' full-mode regex (ASCII, any
# case). Email fields are validated with it, so the server never returns one that such a client
# would refuse, and the format stays in the schemas, where models and clients can see it.
EMAIL = re.compile(
    r"[a-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\.[a-z0-9!#$%&'*+/=?^_`{|}~-]+)*@(?:[a-z0-9](?:[a-z0-9-]*[a-z0-9])?\.)+[a-z0-9](?:[a-z0-9-]*[a-z0-9])?",
    re.ASCII | re.IGNORECASE,
)


def _email(value: str) -> str:
    if not fullmatch(EMAIL.pattern, value, ignore_case=True):
        raise ValueError("value is not an email address of the `email` format")
    return value


EmailStr = Annotated[str, AfterValidator(_email), WithJsonSchema({"type": "string", "format": "email"})]


# The other formats strict clients check (ajv-formats 3, full mode, as the TypeScript SDK sets it
# up), ported so the server never accepts a value such a client refuses: pydantic's own parsers
# also take `10:00:00` for a `time` (AJV wants a timezone), `1 day` for a `duration`, a UUID
# without hyphens, `2024-01-01T00:00Z` or "1700000000" for a `date-time`. Each typed field is
# checked both ways: AJV's rule on the JSON text first, then pydantic's type.
_DATE = re.compile(r"(\d\d\d\d)-(\d\d)-(\d\d)", re.ASCII)
_TIME = re.compile(r"(\d\d):(\d\d):(\d\d(?:\.\d+)?)(z|([+-])(\d\d)(?::?(\d\d))?)?", re.ASCII | re.IGNORECASE)
_DAYS = (0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)
_FORMAT_PATTERNS = {
    "duration": re.compile(r"P(?!$)((\d+Y)?(\d+M)?(\d+D)?(T(?=\d)(\d+H)?(\d+M)?(\d+S)?)?|(\d+W)?)", re.ASCII),
    "uuid": re.compile(r"(?:urn:uuid:)?[0-9a-f]{8}-(?:[0-9a-f]{4}-){3}[0-9a-f]{12}", re.ASCII | re.IGNORECASE),
    "ipv4": re.compile(r"(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)", re.ASCII),
    "ipv6": re.compile(
        r"((([0-9a-f]{1,4}:){7}([0-9a-f]{1,4}|:))|(([0-9a-f]{1,4}:){6}(:[0-9a-f]{1,4}|((25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3})|:))|(([0-9a-f]{1,4}:){5}(((:[0-9a-f]{1,4}){1,2})|:((25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3})|:))|(([0-9a-f]{1,4}:){4}(((:[0-9a-f]{1,4}){1,3})|((:[0-9a-f]{1,4})?:((25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}))|:))|(([0-9a-f]{1,4}:){3}(((:[0-9a-f]{1,4}){1,4})|((:[0-9a-f]{1,4}){0,2}:((25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}))|:))|(([0-9a-f]{1,4}:){2}(((:[0-9a-f]{1,4}){1,5})|((:[0-9a-f]{1,4}){0,3}:((25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}))|:))|(([0-9a-f]{1,4}:){1}(((:[0-9a-f]{1,4}){1,6})|((:[0-9a-f]{1,4}){0,4}:((25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}))|:))|(:(((:[0-9a-f]{1,4}){1,7})|((:[0-9a-f]{1,4}){0,5}:((25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}))|:)))",
        re.ASCII | re.IGNORECASE,
    ),
}


# `uri` fields: real APIs put relative references there ("/v1/items/1"), which the `uri` format
# refuses, so they are published and checked as `uri-reference`, absolute or relative, by
# ajv-formats' own regex.
_URI_REFERENCE = re.compile(
    r"""(?:[a-z][a-z0-9+\-.]*:)?(?:\/?\/(?:(?:[a-z0-9\-._~!$&'()*+,;=:]|%[0-9a-f]{2})*@)?(?:\[(?:(?:(?:(?:[0-9a-f]{1,4}:){6}|::(?:[0-9a-f]{1,4}:){5}|(?:[0-9a-f]{1,4})?::(?:[0-9a-f]{1,4}:){4}|(?:(?:[0-9a-f]{1,4}:){0,1}[0-9a-f]{1,4})?::(?:[0-9a-f]{1,4}:){3}|(?:(?:[0-9a-f]{1,4}:){0,2}[0-9a-f]{1,4})?::(?:[0-9a-f]{1,4}:){2}|(?:(?:[0-9a-f]{1,4}:){0,3}[0-9a-f]{1,4})?::[0-9a-f]{1,4}:|(?:(?:[0-9a-f]{1,4}:){0,4}[0-9a-f]{1,4})?::)(?:[0-9a-f]{1,4}:[0-9a-f]{1,4}|(?:(?:25[0-5]|2[0-4]\d|[01]?\d\d?)\.){3}(?:25[0-5]|2[0-4]\d|[01]?\d\d?))|(?:(?:[0-9a-f]{1,4}:){0,5}[0-9a-f]{1,4})?::[0-9a-f]{1,4}|(?:(?:[0-9a-f]{1,4}:){0,6}[0-9a-f]{1,4})?::)|[Vv][0-9a-f]+\.[a-z0-9\-._~!$&'()*+,;=:]+)\]|(?:(?:25[0-5]|2[0-4]\d|[01]?\d\d?)\.){3}(?:25[0-5]|2[0-4]\d|[01]?\d\d?)|(?:[a-z0-9\-._~!$&'"()*+,;=]|%[0-9a-f]{2})*)(?::\d*)?(?:\/(?:[a-z0-9\-._~!$&'"()*+,;=:@]|%[0-9a-f]{2})*)*|\/(?:(?:[a-z0-9\-._~!$&'"()*+,;=:@]|%[0-9a-f]{2})+(?:\/(?:[a-z0-9\-._~!$&'"()*+,;=:@]|%[0-9a-f]{2})*)*)?|(?:[a-z0-9\-._~!$&'"()*+,;=:@]|%[0-9a-f]{2})+(?:\/(?:[a-z0-9\-._~!$&'"()*+,;=:@]|%[0-9a-f]{2})*)*)?(?:\?(?:[a-z0-9\-._~!$&'"()*+,;=:@/?]|%[0-9a-f]{2})*)?(?:#(?:[a-z0-9\-._~!$&'"()*+,;=:@/?]|%[0-9a-f]{2})*)?""",
    re.ASCII | re.IGNORECASE,
)


def _is_date(text: str) -> bool:
    match = _DATE.fullmatch(text)
    if not match:
        return False
    year, month, day = (int(g) for g in match.groups())
    leap = year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)
    return 1 <= month <= 12 and 1 <= day <= (29 if month == 2 and leap else _DAYS[month])


def _is_time(text: str) -> bool:
    # The linear engine first: `re` backtracks over a long run of fraction digits that fails, holding
    # the interpreter for seconds; on text that matches it does not.
    match = _TIME.fullmatch(text) if fullmatch(_TIME.pattern, text, ignore_case=True) else None
    if not match:
        return False
    hour, minute, second = int(match[1]), int(match[2]), float(match[3])
    zone, sign = match[4], -1 if match[5] == "-" else 1
    zone_hours, zone_minutes = int(match[6] or 0), int(match[7] or 0)
    if zone_hours > 23 or zone_minutes > 59 or not zone:
        return False
    if hour <= 23 and minute <= 59 and second < 60:
        return True
    utc_minute = minute - zone_minutes * sign  # a leap second: 23:59:60 UTC only
    utc_hour = hour - zone_hours * sign - (1 if utc_minute < 0 else 0)
    return utc_hour in (23, -1) and utc_minute in (59, -1) and second < 61


def _is_date_time(text: str) -> bool:
    parts = re.split(r"t|\s", text, flags=re.IGNORECASE)
    return len(parts) == 2 and _is_date(parts[0]) and _is_time(parts[1])


# The error type of a date-time that would be one with a timezone: an API that sends such values
# (many FastAPI apps do) is named as such, with the config setting that accepts them (results.py).
NAIVE_DATE_TIME_ERROR = "naive_date_time"


def _is_naive_date_time(text: str) -> bool:
    return _is_date_time(text + "Z")


def _matches_whole(pattern: re.Pattern[str]) -> Callable[[str], bool]:
    return lambda text: pattern.fullmatch(text) is not None


STRICT_FORMATS: dict[str, Callable[[str], bool]] = {
    "uri-reference": lambda text: fullmatch(_URI_REFERENCE.pattern, text, ignore_case=True),
    "date-time": _is_date_time,
    "date": _is_date,
    "time": _is_time,
    **{name: _matches_whole(pattern) for name, pattern in _FORMAT_PATTERNS.items()},
}


def _strict_format(name: str, kind: Any, parsed: bool = True) -> Any:
    """`kind` (a datetime, a UUID...) read from a string that passes AJV's `name` rule. The string is
    parsed here (`parsed`), as pydantic's lax mode does: the type behind this validator then sees an
    instance, which its strict mode wants (strict mode parses only strings straight from JSON; the
    IP address types are the exception, and take the string)."""
    check, parse = STRICT_FORMATS[name], TypeAdapter(kind)

    def validate(value: Any) -> Any:
        if not isinstance(value, str):
            return value  # a number for a date-time: the strict type refuses it
        if not check(value):
            if name == "date-time" and _is_naive_date_time(value):
                raise PydanticCustomError(
                    NAIVE_DATE_TIME_ERROR, "a date-time without a timezone, which `date-time` needs"
                )
            raise ValueError(f"value is not a `{name}` as strict MCP clients check the format")
        return parse.validate_python(value) if parsed else value

    return Annotated[kind, BeforeValidator(validate)]


# What the generated models use in place of the code generator's types (see generator/models.py).
AwareDatetime = _strict_format("date-time", _AwareDatetime)
Date = _strict_format("date", datetime.date)
Time = _strict_format("time", datetime.time)
Duration = _strict_format("duration", datetime.timedelta)
Uuid = _strict_format("uuid", UUID)
IPv4 = _strict_format("ipv4", IPv4Address, parsed=False)
IPv6 = _strict_format("ipv6", IPv6Address, parsed=False)


def _uri_reference(value: str) -> str:
    if not fullmatch(_URI_REFERENCE.pattern, value, ignore_case=True):
        raise ValueError("value is not a `uri-reference` as strict MCP clients check the format")
    return value


UriReference = Annotated[
    str, AfterValidator(_uri_reference), WithJsonSchema({"type": "string", "format": "uri-reference"})
]
