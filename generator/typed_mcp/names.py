"""Names derived from untrusted spec text: always `[a-z0-9_]` identifiers, stable, unique.

Uniqueness never depends on the order operations appear in: every member of a colliding group
gets a suffix hashed from its own `METHOD /path`, which does not change when the spec is reordered.
"""

from __future__ import annotations

import builtins
import hashlib
import keyword
import re
import unicodedata
from collections import defaultdict
from collections.abc import Iterable

from typed_mcp.errors import SpecError

MAX_TOOL_NAME = 64
_CAMEL_1 = re.compile(r"([a-z0-9])([A-Z])")
_CAMEL_2 = re.compile(r"([A-Z]+)([A-Z][a-z])")
_NON_WORD = re.compile(r"[^a-z0-9]+")

# Names a generated module may not define at top level or take as a parameter.
_RESERVED = set(keyword.kwlist) | set(keyword.softkwlist) | set(dir(builtins))
# A parameter may shadow a builtin (the function body does not use them), but not a keyword, nor
# `api`, which the body calls; `model_*` clashes with pydantic's namespace in the SDK's argument model.
_ARGUMENT_RESERVED = set(keyword.kwlist) | {"api"}


def short_hash(text: str, length: int = 8) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:length]


def snake_case(text: str) -> str:
    """`repos/get` -> `repos_get`, `getUserByID` -> `get_user_by_id`, `List Pets!` -> `list_pets`."""
    text = _CAMEL_2.sub(r"\1_\2", text)
    text = _CAMEL_1.sub(r"\1_\2", text)
    text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii").lower()
    return _NON_WORD.sub("_", text).strip("_")


def pascal_case(text: str) -> str:
    words = snake_case(text).split("_")
    name = "".join(word[:1].upper() + word[1:] for word in words if word)
    if not name or not name[0].isalpha():
        name = "Model" + name
    return name


def _route_suffix(method: str, path: str) -> str:
    """What a generated operationId appends to a function name: its path and method, snake_cased."""
    return snake_case(f"{path} {method}")


def _strip_route_suffix(name: str, method: str, path: str) -> str:
    """`read_flow_flows_id_get` for `GET /flows/{id}` -> `read_flow`: an operationId that repeats its own
    path and method (FastAPI's default `{function}{path}_{method}`, and generators like it) says nothing
    the name needs; the function name before it is the readable part."""
    suffix = _route_suffix(method, path)
    if suffix and name.endswith("_" + suffix) and len(name) > len(suffix) + 1:
        return name[: -len(suffix) - 1]
    return name


def _start_alpha(name: str) -> str:
    return name if not name or name[0].isalpha() else "op_" + name


def base_tool_name(operation_id: str | None, method: str, path: str) -> str:
    name = _strip_route_suffix(snake_case(operation_id or ""), method, path) or snake_case(f"{method} {path}")
    return _start_alpha(name or method.lower())


# Shortening (for names over TARGET_TOOL_NAME): hosts prefix tool names (`mcp__<server>__<tool>`), so a
# name well under the 64-character limit leaves room. Each step keeps every word a reader needs to
# tell operations apart, in order of how little it loses: words that carry no meaning, common long
# words in their usual short forms, a word said twice, then the parts of a path a name spells out
# that are parameters or versions. A shortened name is used only when no other operation could take
# it (see `unique_tool_names`), so shortening never creates a collision.
TARGET_TOOL_NAME = 40
_FILLER_WORDS = frozenset({"a", "an", "the", "of", "for", "by", "with"})
_SHORT_FORMS = {
    "administrator": "admin",
    "administrators": "admins",
    "application": "app",
    "applications": "apps",
    "attachment": "attach",
    "attachments": "attachs",
    "attribute": "attr",
    "attributes": "attrs",
    "authenticated": "auth",
    "authentication": "authn",
    "authorization": "authz",
    "certificate": "cert",
    "certificates": "certs",
    "configuration": "config",
    "configurations": "configs",
    "connection": "conn",
    "connections": "conns",
    "definition": "def",
    "definitions": "defs",
    "deployment": "deploy",
    "deployments": "deploys",
    "description": "desc",
    "directory": "dir",
    "directories": "dirs",
    "distribution": "dist",
    "distributions": "dists",
    "environment": "env",
    "environments": "envs",
    "identifier": "id",
    "identifiers": "ids",
    "information": "info",
    "management": "mgmt",
    "message": "msg",
    "messages": "msgs",
    "namespace": "ns",
    "namespaced": "ns",
    "namespaces": "ns",
    "notification": "notif",
    "notifications": "notifs",
    "organization": "org",
    "organizations": "orgs",
    "parameter": "param",
    "parameters": "params",
    "permission": "perm",
    "permissions": "perms",
    "repositories": "repos",
    "repository": "repo",
    "specification": "spec",
    "statistics": "stats",
    "subscription": "sub",
    "subscriptions": "subs",
    "vulnerability": "vuln",
    "vulnerabilities": "vulns",
}


def _singular(word: str) -> str:
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith("s") and not word.endswith("ss") and len(word) > 3:
        return word[:-1]
    return word


def _without_repeats(words: list[str]) -> list[str]:
    """Each word once (a plural counts as its singular); the first word, usually the verb, stays."""
    seen: set[str] = set()
    kept = []
    for index, word in enumerate(words):
        if _singular(word) in seen and index > 0 and not word.isdigit():
            continue
        seen.add(_singular(word))
        kept.append(word)
    return kept


_VERSION = re.compile(r"^v\d+([a-z]+\d*)?$")


def _path_words(method: str, path: str) -> list[str] | None:
    """`GET /v3/projects/{id}/notes/{note_id}` -> [get, projects, notes, note, id]: the words a
    path-spelled name keeps. A parameter ending the path stays: it tells one item from the list."""
    words = [method.lower()]
    segments = [s for s in path.split("#")[0].split("/") if s]
    for index, segment in enumerate(segments):
        variable = re.fullmatch(r"{[^{}]*}", segment)
        if (variable and index < len(segments) - 1) or _VERSION.match(segment.lower()):
            continue
        words.extend(w for w in snake_case(segment).split("_") if w)
    return words if len(words) > 1 else None


def shorter_names(name: str, method: str = "", path: str = "") -> list[str]:
    """Ever shorter readable forms of a tool name, each a step beyond the one before; `name` first."""
    words = name.split("_")
    meaningful = [w for w in words if w not in _FILLER_WORDS] or words
    short = [_SHORT_FORMS.get(w, w) for w in meaningful]
    steps = [words, meaningful, short, _without_repeats(short)]
    if method and name in (snake_case(f"{method} {path}"), snake_case(path)):
        spelled = _path_words(method, path)  # a name that only spells out its path: drop the variables
        if spelled:
            steps.append(_without_repeats([_SHORT_FORMS.get(w, w) for w in spelled if w not in _FILLER_WORDS]))
    result: list[str] = []
    for step in steps:
        candidate = _start_alpha("_".join(step))
        if candidate and candidate not in result and (not result or len(candidate) < len(result[-1])):
            result.append(candidate)
    return result


def tool_name_candidates(operation_id: str | None, method: str, path: str, target: int = TARGET_TOOL_NAME) -> list[str]:
    """The names an operation could take, best first: its base name and, while still over `target`,
    shorter forms; then, for when another operation wants the same, forms that keep more of the
    original: the operationId with its path but not its method, the whole operationId, and the
    base name followed by method and path."""
    base = base_tool_name(operation_id, method, path)
    full = _start_alpha(snake_case(operation_id or ""))
    stems = [base]
    if full and full != base:
        method_suffix = "_" + method.lower()
        stems += [_start_alpha(full.removesuffix(method_suffix)), full] if full.endswith(method_suffix) else [full]
    result: list[str] = []
    for stem in stems:
        for candidate in shorter_names(stem, method, path):
            if candidate not in result:
                result.append(candidate)
            if len(candidate) <= target:
                break
    routed = _start_alpha(f"{base}_{_route_suffix(method, path)}")  # unique per key, as it is: the last resort
    return result if routed in result else [*result, routed]


def _claims(candidates: dict[str, list[str]]) -> dict[str, list[str]]:
    """The names each key wins: a name goes to the key that lists it earliest; when two list it
    equally early, neither takes it."""
    best: dict[str, tuple[int, str | None]] = {}
    for key, names_ in candidates.items():
        for rank, name in enumerate(names_):
            held = best.get(name)
            if held is None or rank < held[0]:
                best[name] = (rank, key)
            elif rank == held[0] and held[1] != key:
                best[name] = (rank, None)
    return {key: [n for n in names_ if best[n][1] == key] for key, names_ in candidates.items()}


def _pick(won: list[str], target: int) -> str | None:
    """The first name within `target`, else the shortest."""
    return next((n for n in won if len(n) <= target), None) or (min(won, key=len) if won else None)


_CONNECTORS = _FILLER_WORDS | {"and", "or", "from", "to", "in", "on", "at", "as"}


def _one_word_less(name: str, frequency: dict[str, int]) -> list[str]:
    """`name` without one of its words, the word most of the spec's names share (telling the fewest
    apart) first. The first word (a verb or a group) and versions stay: without them a reader could
    not tell which of two similar names is which. No `..._from` is left dangling."""
    words = name.split("_")
    # Among words as common, a later one goes first: a name tends to start with what it does.
    order = sorted(
        (i for i in range(1, len(words)) if not _VERSION.match(words[i])),
        key=lambda i: (-frequency.get(words[i], 0), -i),
    )
    result = []
    for index in order:
        kept = words[:index] + words[index + 1 :]
        while len(kept) > 1 and kept[-1] in _CONNECTORS:
            kept.pop()
        text = "_".join(kept)
        if text not in result:
            result.append(text)
    return result


def unique_tool_names(
    items: Iterable[tuple[str, str | list[str]]], limit: int = MAX_TOOL_NAME, target: int = TARGET_TOOL_NAME
) -> dict[str, str]:
    """Map each key (`METHOD /path`) to a unique tool name, given (key, candidate names best first)
    pairs; a single base name stands for its `shorter_names`.

    Each key takes the first name within `target`, else the shortest, of the candidates it wins
    (see `_claims`). A key still over `target` then drops one word at a time (`_one_word_less`),
    taking only names no key listed before, so no earlier choice changes. The outcome depends on the
    set of operations, never on their order; a key left with no name (its every candidate is also
    another's: a real collision) gets a hash of its own key, the one suffix that cannot collide.
    """
    wanted = {key: shorter_names(names_) if isinstance(names_, str) else list(names_) for key, names_ in items}
    candidates = {key: [c for c in names_ if len(c) <= limit] for key, names_ in wanted.items()}
    chosen = {key: _pick(won, target) for key, won in _claims(candidates).items()}
    frequency: dict[str, int] = defaultdict(int)
    for names_ in wanted.values():
        for word in set(names_[0].split("_")) if names_ else ():
            frequency[word] += 1
    taken = {name for names_ in candidates.values() for name in names_}
    while True:  # one word less at a time, never to a name any key listed or holds
        longer = {
            key: [c for c in _one_word_less(chosen[key] or wanted[key][-1], frequency) if c not in taken]
            for key in wanted
            if wanted[key] and (chosen[key] is None or len(chosen[key]) > target)
        }
        shortened = {key: won[0] for key, won in _claims(longer).items() if won}
        if not shortened:
            break
        taken.update(name for names_ in longer.values() for name in names_)
        chosen.update(shortened)
    result: dict[str, str] = {}
    for key, name in chosen.items():
        if name is None:
            first = min(wanted[key] or [snake_case(key) or "op"], key=len)
            suffix = short_hash(key)
            name = first[: min(limit, target) - len(suffix) - 1].rstrip("_") + "_" + suffix
        result[key] = name
    return result


MAX_TOOL_PREFIX = 24


def tool_prefix(text: str) -> str:
    """A prefix for every tool name (`gh` -> `gh_`), for hosts that mix servers: `[a-z0-9_]`, starting
    with a letter, kept short because it counts within the limit of every name."""
    prefix = _NON_WORD.sub("_", text.lower()).strip("_")
    if not prefix:
        return ""
    if not prefix[0].isalpha() or len(prefix) > MAX_TOOL_PREFIX:
        raise SpecError(
            f"tool prefix {text!r}: use at most {MAX_TOOL_PREFIX} letters, digits and '_', starting with a letter"
        )
    return prefix + "_"


# Words a title uses to say it is an API description: they name no product.
_TITLE_STOP = frozenset({"a", "an", "and", "as", "by", "for", "of", "the", "to", "with"})
_TITLE_FILLER = _TITLE_STOP | {
    "api",
    "apis",
    "client",
    "definition",
    "doc",
    "docs",
    "documentation",
    "extension",
    "extensions",
    "http",
    "interface",
    "json",
    "mcp",
    "official",
    "openapi",
    "platform",
    "reference",
    "rest",
    "restful",
    "schema",
    "sdk",
    "server",
    "service",
    "spec",
    "specification",
    "swagger",
    "web",
}
_NUMBER = re.compile(r"^v?\d+(?:[a-z]+\d*)?$")


def title_words(title: str, most: int = 3) -> list[str]:
    """The words of an API title that name it: `GitHub's official OpenAPI spec + Octokit extension`
    -> [github, octokit]. A word keeps its brand spelling (`GitHub`, `OpenAPI`: two capitals) and is
    split only when it runs several words together (`VirtualWANAsAServiceClient`); possessives,
    versions and words every API description uses go. A title of only those keeps its own words."""
    text = re.sub(r"[\'\u2019]s\b", "", title)
    words: list[str] = []
    for token in re.findall(
        r"[A-Za-z0-9]+", unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    ):
        parts = snake_case(token).split("_")
        words.extend(parts if len(parts) > 2 else ["".join(parts)])
    kept = [w for w in words if w not in _TITLE_FILLER and not _NUMBER.match(w)]
    return (kept or [w for w in words if w not in _TITLE_STOP])[:most]


def python_name(name: str) -> str:
    """A tool name as a module-level function name: builtins and keywords get a trailing `_`."""
    return name + "_" if name in _RESERVED else name


def argument_name(wire_name: str) -> str:
    """A parameter's Python (and MCP argument) name."""
    name = snake_case(wire_name) or "param"
    if name[0].isdigit():
        name = "p_" + name
    if name in _ARGUMENT_RESERVED or name.startswith("model_"):
        name += "_"
    return name


def unique_argument_names(candidates: list[tuple[str, str, str]]) -> dict[tuple[str, str], str]:
    """(wire name, location, preferred name) -> unique argument names.

    Two arguments wanting the same name both take their location as a suffix
    (`id_path`, `id_query`); a collision that survives that gets a hash suffix.
    """
    wanted: dict[str, list[tuple[str, str]]] = defaultdict(list)
    for wire, location, preferred in candidates:
        wanted[preferred].append((wire, location))
    result: dict[tuple[str, str], str] = {}
    taken: set[str] = {name for name, owners in wanted.items() if len(owners) == 1}
    for preferred, owners in wanted.items():
        if len(owners) == 1:
            result[owners[0]] = preferred
            continue
        by_location = [(wire, location, f"{preferred.rstrip('_')}_{location}") for wire, location in owners]
        counts = defaultdict(int)
        for _, _, name in by_location:
            counts[name] += 1
        for wire, location, name in by_location:
            if counts[name] > 1 or name in taken:
                name = f"{name}_{short_hash(wire + ' ' + location, 6)}"
            taken.add(name)
            result[(wire, location)] = name
    return result
