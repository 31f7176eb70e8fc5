"""Names derived from untrusted spec text: always `[a-z0-9_]` identifiers, stable, unique.

Uniqueness never depends on the order operations appear in: every member of a colliding group
gets a suffix hashed from its own `METHOD /path`, which does not change when the spec is reordered.
"""

from __future__ import annotations

import builtins
import functools
import hashlib
import itertools
import keyword
import re
import unicodedata
import warnings
from collections import Counter, defaultdict
from collections.abc import Iterable
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from typing import Any

import pydantic

from typed_mcp.errors import SpecError

MAX_TOOL_NAME = 64
_CAMEL_1 = re.compile(r"([a-z0-9])([A-Z])")
# Between the capitals of an acronym and the capitalized word after it (`HTTPServer`): lookarounds,
# linear in the text, where `([A-Z]+)([A-Z][a-z])` rescanned a run of capitals from each of them.
_CAMEL_2 = re.compile(r"(?<=[A-Z])(?=[A-Z][a-z])")
_NON_WORD = re.compile(r"[^a-z0-9]+")

# Names a generated module may not define at top level or take as a parameter.
_RESERVED = set(keyword.kwlist) | set(keyword.softkwlist) | set(dir(builtins))
# A parameter may shadow a builtin (the function body does not use them), but not a keyword, nor
# `api`, which the body calls (nor a name pydantic refuses in the SDK's argument model: see below).
_ARGUMENT_RESERVED = set(keyword.kwlist) | {"api"}


# Verbs that only read: a POST named by one of them (`list_runs`, `get_plan`, `search`) reads.
READ_VERBS = frozenset(
    {"list", "get", "describe", "search", "query", "count", "find", "fetch", "read", "show", "retrieve", "lookup"}
    | {"poll"}
)
# Verbs that destroy what they name: destructive whatever the method (`POST /runs/delete`).
DESTRUCTIVE_VERBS = frozenset(
    {"delete", "remove", "destroy", "terminate", "purge", "erase", "wipe", "kill", "revoke", "truncate", "uninstall"}
)
# Verbs that change something: with one of them a name does not only read (`get_or_create_run`).
WRITE_VERBS = DESTRUCTIVE_VERBS | {
    "create",
    "update",
    "upsert",
    "add",
    "set",
    "put",
    "post",
    "patch",
    "modify",
    "edit",
    "change",
    "replace",
    "write",
    "save",
    "upload",
    "insert",
    "import",
    "apply",
    "submit",
    "send",
    "execute",
    "trigger",
    "start",
    "stop",
    "restart",
    "cancel",
    "enable",
    "disable",
    "assign",
    "unassign",
    "attach",
    "detach",
    "register",
    "unregister",
    "approve",
    "reject",
    "merge",
    "move",
    "rename",
    "copy",
    "clone",
    "sync",
    "reset",
    "rotate",
    "refresh",
    "invite",
    "publish",
    "deploy",
    "archive",
    "restore",
    "lock",
    "unlock",
    "mark",
    "login",
    "logout",
}

# Every verb above: the words an operationId written as one word may begin or end with (`_split_joined`).
VERBS = READ_VERBS | WRITE_VERBS


def short_hash(text: str, length: int = 8) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:length]


# Naming asks for the same few strings again and again (each operation's path under every method, a
# group's names per candidate): Microsoft Graph's 22,000 operations made this a third of planning.
@functools.lru_cache(maxsize=1 << 18)
def snake_case(text: str) -> str:
    """`repos/get` -> `repos_get`, `getUserByID` -> `get_user_by_id`, `List Pets!` -> `list_pets`."""
    text = _CAMEL_2.sub("_", text)
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
    """What a generated operationId appends to a function name: its path and method, snake_cased.
    The same as `snake_case(f"{path} {method}")` (the space parts them), from the path's own, which
    is asked for under every method."""
    return "_".join(part for part in (snake_case(path), snake_case(method)) if part)


_METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")


def _strip_route_suffix(name: str, method: str, path: str) -> str:
    """`read_flow_flows_id_get` for `GET /flows/{id}` -> `read_flow`: an operationId that repeats its own
    path and a method (FastAPI's default `{function}{path}_{method}`, and generators like it) says nothing
    the name needs; the function name before it is the readable part. The method may be another of the
    route's: FastAPI gives a route serving GET and HEAD one operationId, from either."""
    for verb in (method.lower(), *_METHODS):
        suffix = _route_suffix(verb, path)
        if suffix and name.endswith("_" + suffix) and len(name) > len(suffix) + 1:
            return name[: -len(suffix) - 1]
    return name


def _start_alpha(name: str) -> str:
    return name if not name or name[0].isalpha() else "op_" + name


def base_tool_name(operation_id: str | None, method: str, path: str) -> str:
    name = _strip_route_suffix(snake_case(operation_id or ""), method, path) or snake_case(f"{method} {path}")
    return _start_alpha(_split_joined(name, path) or method.lower())


_JOINED = re.compile(r"[a-z][a-z0-9]{11,}")  # one word of 12 or more characters, no part marked
_LONGEST_WORD = 30


def _split_joined(name: str, path: str) -> str:
    """`updateorganizationspendlimit` on `/organization/spend_limit` ->
    `update_organization_spend_limit`: an operationId written as one word, split into the verbs names
    begin or end with and its own path's words (or their singulars), when those words spell all of it
    (the fewest of them; the earliest split of a tie); `notifications` on `/notifications`, or a word
    those words do not spell, as it is."""
    if not _JOINED.fullmatch(name):
        return name
    words = _spell(name, _spelling_words(path))
    return "_".join(words) if words and len(words) > 1 else name


def _spelling_words(path: str) -> set[str]:
    """The words of `path` (and their singulars) and the verbs names begin or end with."""
    own = [word for segment in path.split("/") for word in snake_case(segment).split("_") if len(word) > 1]
    return set(VERBS) | set(own) | {singular(word) for word in own}


_LONGEST_SPELLED = 200  # a longer operationId is no name written as one word: left as it is


def _spell(text: str, known: set[str]) -> list[str] | None:
    """The fewest words of `known` that spell `text` (the earliest split of a tie), or None; None for
    a text over _LONGEST_SPELLED characters (spec text is untrusted: the work stays bounded)."""
    if len(text) > _LONGEST_SPELLED:
        return None
    # count[end]: the fewest words spelling text[:end]; start[end]: where its last word begins.
    count: list[int | None] = [0, *([None] * len(text))]
    start: list[int] = [0] * (len(text) + 1)
    for end in range(1, len(text) + 1):
        for begin in range(max(0, end - _LONGEST_WORD), end):
            before = count[begin]
            if before is not None and text[begin:end] in known:
                best = count[end]
                if best is None or before + 1 < best:
                    count[end], start[end] = before + 1, begin
    if count[len(text)] is None:
        return None
    words, end = [], len(text)
    while end:
        words.append(text[start[end] : end])
        end = start[end]
    return words[::-1]


def spelled(operation_id: str | None, path: str, summary: str | None) -> str | None:
    """`operation_id`, or, when it runs words together that its summary says apart, those words:
    `CreateanAPIkeyforaserviceaccount` ("Creates an API key for a service account") ->
    `create_an_api_key_for_a_service_account`, `getinputtokencounts` ("Returns input token counts")
    -> `get_input_token_counts`. Runs words together: snake_case leaves a word of 12 or more
    characters that is not one of them; spelled with the summary's words, the verbs names begin
    with and the path's words (the fewest), when that gives more words than snake_case does (a
    camelCase operationId is split already: `InitializerConfiguration` stays two words), or left as
    it is."""
    if not operation_id or not summary or len(summary.split()) < 2:  # prose, not an identifier
        return operation_id
    said = {word for word in snake_case(summary).split("_") if len(word) > 1 or word == "a"}  # groupId: 2
    known = _spelling_words(path) | said
    parts = snake_case(operation_id).split("_")
    if not any(len(part) >= 12 and part not in known for part in parts):
        return operation_id
    words = _spell(re.sub(r"[^a-z0-9]", "", operation_id.lower()), known)
    return "_".join(words) if words and len(words) > len(parts) else operation_id  # never fewer words


# Shortening (for names over TARGET_TOOL_NAME): hosts prefix tool names (`mcp__<server>__<tool>`), so a
# name well under the 64-character limit leaves room. Each step keeps every word a reader needs to
# tell operations apart, in order of how little it loses: words that carry no meaning, common long
# words in their usual short forms, a word said twice, then the parts of a path a name spells out
# that are parameters or versions. A shortened name is used only when no other operation could take
# it (see `unique_tool_names`), so shortening never creates a collision.
TARGET_TOOL_NAME = 40
_FILLER_WORDS = frozenset({"a", "an", "the", "of", "for", "by", "with"})
_CONNECTORS = _FILLER_WORDS | {"and", "or", "from", "to", "in", "on", "at", "as"}
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


def singular(word: str) -> str:
    """`word` without a plural's ending ("repositories" -> "repository", "orgs" -> "org")."""
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
        if singular(word) in seen and index > 0 and not word.isdigit():
            continue
        seen.add(singular(word))
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
    """The names an operation could take, best first, when no other operation has its base name: its
    base name and, while still over `target`, shorter forms; then, for when another operation wants
    the same, forms that keep more of the original (see `_fallbacks`)."""
    return _within(base_tool_name(operation_id, method, path), method, path, target) + _fallbacks(
        operation_id, method, path, target
    )


def _within(name: str, method: str, path: str, target: int) -> list[str]:
    """`name` and its shorter forms up to the first within `target`."""
    result: list[str] = []
    for candidate in shorter_names(name, method, path):
        result.append(candidate)
        if len(candidate) <= target:
            break
    return result


def _fallbacks(operation_id: str | None, method: str, path: str, target: int) -> list[str]:
    """Last resorts for a name no distinguishing path words could settle: the operationId with its path
    but not its method, the whole operationId, then the base name followed by method and path (unique
    per operation, as it is)."""
    base = base_tool_name(operation_id, method, path)
    full = _start_alpha(snake_case(operation_id or ""))
    stems = []
    if full and full != base:
        method_suffix = "_" + method.lower()
        stems += [_start_alpha(full.removesuffix(method_suffix)), full] if full.endswith(method_suffix) else [full]
    result: list[str] = []
    for stem in stems:
        result += [c for c in _within(stem, method, path, target) if c not in result]
    routed = _start_alpha(f"{base}_{_route_suffix(method, path)}")
    return result if routed in result else [*result, routed]


# Words a path parameter's name uses to say how it identifies a thing, not which thing it is:
# `{project_name_or_id}` names a project, `{id}` nothing (its collection does).
_IDENTIFYING_WORDS = frozenset({"id", "ids", "name", "names", "key", "uuid", "guid", "slug", "pk", "identifier", "ref"})
_VARIABLE = re.compile(r"{[^{}]*}")


@dataclass(frozen=True)
class Scope:
    """One thing a path names: `runs`, `v1`, or one item of a collection (`workspaces/{project_name_or_id}`:
    said `project`, from the parameter; `collection` keeps `workspaces` for when that is what differs)."""

    words: tuple[str, ...]
    collection: tuple[str, ...] = ()

    @property
    def key(self) -> tuple[tuple[str, ...], tuple[str, ...]]:
        return tuple(map(singular, self.collection)), tuple(map(singular, self.words))


def route_scopes(path: str) -> list[Scope]:
    """The scopes a path names, in order: `/api/v1/workspaces/{project_name_or_id}/runs` -> api, v1,
    project (of workspaces), runs. A collection followed by a parameter is one scope, an item of it,
    named by the parameter without the words that say how it identifies (`name`, `id`) or, when
    nothing else is left, by the collection in the singular (`/flows/{id}` -> flow)."""
    segments = [s for s in path.split("#")[0].split("?")[0].split("/") if s]
    scopes: list[Scope] = []
    index = 0
    while index < len(segments):
        words = tuple(w for w in snake_case(segments[index]).split("_") if w)
        collection: tuple[str, ...] = ()
        if (
            not _VARIABLE.fullmatch(segments[index])
            and index + 1 < len(segments)
            and _VARIABLE.fullmatch(segments[index + 1])
        ):
            collection = words
            index += 1
            words = tuple(w for w in snake_case(segments[index]).split("_") if w)
        named = tuple(w for w in words if w not in _IDENTIFYING_WORDS and w not in _CONNECTORS)
        if not named and collection:
            named = (*collection[:-1], singular(collection[-1]))
        if named:
            scopes.append(Scope(named, collection))
        index += 1
    return scopes


def _filled(scope_words: tuple[str, ...], words: list[str]) -> list[str] | None:
    """`words` saying `scope_words` too, where some of the scope's words already stand together in
    the name: the missing ones are filled in around them, the name's own words kept as they are
    (`create_work_queue` + work pool -> `create_work_pool_queue`). None when none of them, or all,
    stand there, or they stand apart."""
    singulars = [singular(w) for w in words]
    present = [w for w in scope_words if singular(w) in singulars]
    if not present or len(present) == len(scope_words):
        return None
    first = singulars.index(singular(present[0]))
    if singulars[first : first + len(present)] != [singular(w) for w in present]:
        return None
    own = dict(zip(singulars[first : first + len(present)], words[first : first + len(present)], strict=True))
    return [*words[:first], *(own.get(singular(w), w) for w in scope_words), *words[first + len(present) :]]


def _verb_end(words: list[str]) -> int:
    """Where a name's leading verb phrase ends: `list` in `list_runs`, `get_or_create` in
    `get_or_create_pipeline_run`."""
    end = 1
    while end + 1 < len(words) and words[end] in ("and", "or"):
        end += 2
    return end


def _forms(scope: Scope) -> tuple[tuple[str, ...], ...]:
    """How a scope can be said: its own words, then its collection's as one of it (`workspace`)."""
    if not scope.collection:
        return (scope.words,)
    return scope.words, (*scope.collection[:-1], singular(scope.collection[-1]))


def _unsaid(scope: Scope, words: list[str], forms: tuple[tuple[str, ...], ...] | None = None) -> tuple[str, ...] | None:
    """The first form of `scope` that `words` do not wholly say."""
    said = {singular(w) for w in words}
    return next((form for form in forms or _forms(scope) if not set(map(singular, form)) <= said), None)


def _qualified(
    words: list[str], chosen: list[int], scopes: list[Scope], by_collection: AbstractSet[int] = frozenset()
) -> str:
    """`words` with the scopes `scopes[i]` (i in `chosen`) said in it; nothing of `words` is dropped.
    A scope whose words the name partly says is filled in where they stand (`_filled`); another goes
    right after the verb when the rest of the name names it or something further down the path
    (`list_runs` + project -> `list_project_runs`, `get_or_create_pipeline_run` + project ->
    `get_or_create_project_pipeline_run`), else at the end (`read_project` + full ->
    `read_project_full`). A scope the name already says is said by its collection
    (`get_project` on `/workspaces/{project_name_or_id}` -> `get_workspace_project`), or else again;
    the scopes `by_collection` are said by their collection first."""
    result = list(words)
    for index in sorted(chosen, reverse=True):  # from the end: the positions before stay as they were
        scope = scopes[index]
        form = _unsaid(scope, result, _forms(scope)[::-1] if index in by_collection else None)
        filled = _filled(form, result) if form else None
        if filled is not None:
            result = filled
            continue
        said = {singular(w) for w in result}
        missing = [w for w in form if singular(w) not in said] if form else list(scope.words)
        later = {singular(w) for s in scopes[index:] for w in (*s.words, *s.collection)}
        verb = _verb_end(result)
        at = verb if any(singular(w) in later for w in result[verb:]) else len(result)
        result[at:at] = missing
    return "_".join(result)


_MOST_SCOPES = 3  # a name says at most this many distinguishing scopes before the fallbacks
# The distinct scopes of a path whose combinations are tried (real APIs' paths have fewer than 8):
# their combinations grow as the cube of their number, and a spec's paths may have hundreds.
_MOST_DISTINCT = 12


def _distinguished(group: list[tuple[str, str | None, str, str]], target: int) -> dict[str, list[str]]:
    """Candidates for operations that share a base name (FastAPI's default operationIds, once their
    route suffix is gone, for one function on two routes): each says the fewest scopes of its path
    that the others do not all share, fewest first (`list_runs` on `/api/v1/runs` and
    `/api/v1/workspaces/{project_name_or_id}/runs` -> `list_runs`, `list_project_runs`); an operation
    whose path has no such scope keeps the base name. Scopes all of them share (`api`, `v1`) are
    never said. Operations on one path are told apart by their method."""
    base = base_tool_name(group[0][1], group[0][2], group[0][3])
    words = base.split("_")
    routes = {key: route_scopes(path) for key, _, _, path in group}
    shared = set.intersection(*({scope.key for scope in scopes} for scopes in routes.values()))
    paths = [path for _, _, _, path in group]
    # An operation whose path has no scope the others lack takes the base name; where there is none,
    # the base name goes to those whose distinct scopes the name says already (`get_deployment` on
    # `/deployments/{id}`, beside `get_pipeline_deployment` on `/pipeline_deployments/{id}`).
    plain = any(not ({scope.key for scope in scopes} - shared) for scopes in routes.values())
    clashes = Counter(
        words for words, _ in {(s.key[1], s.key) for scopes in routes.values() for s in scopes if s.key not in shared}
    )
    result: dict[str, list[str]] = {}
    for key, operation_id, method, path in group:
        scopes = routes[key]
        distinct = [i for i, scope in enumerate(scopes) if scope.key not in shared]
        # A scope the name already says, in every form, is said again only after the others.
        fresh = [i for i in distinct if _unsaid(scopes[i], words)]
        distinct = fresh + [i for i in distinct if i not in fresh]
        wanted: list[str] = []
        if not distinct or not fresh and not plain:  # nothing else tells it apart: the base name
            wanted += _within(base, method, path, target)
        # A scope whose words another, different scope says too is said by its collection where that
        # differs (`workspaces/{project_id}` beside `projects/{project_id}`: workspace, project).
        by_collection = {
            i for i in distinct if clashes[scopes[i].key[1]] > 1 and _forms(scopes[i])[-1] != scopes[i].words
        }
        for size in range(1, min(len(distinct), _MOST_SCOPES) + 1):
            for chosen in itertools.combinations(distinct[:_MOST_DISTINCT], size):
                name = _qualified(words, list(chosen), scopes, by_collection)
                wanted += _within(name, method, path, target)
        if paths.count(path) > 1:  # one path, several methods: the method tells them apart
            named = _qualified(words, distinct[:1], scopes) if fresh else base
            wanted += _within(f"{named}_{method.lower()}", method, path, target)
        wanted += _fallbacks(operation_id, method, path, target)
        result[key] = list(dict.fromkeys(wanted))  # each once, where it first comes
    return result


def tool_name_choices(
    operations: Iterable[tuple[str, str | None, str, str]], target: int = TARGET_TOOL_NAME
) -> dict[str, list[str]]:
    """(key, operationId, method, path) -> the names each operation could take, best first, for
    `unique_tool_names`. Operations that share a base name are told apart by their paths
    (`_distinguished`), the others take `tool_name_candidates`."""
    groups: dict[str, list[tuple[str, str | None, str, str]]] = defaultdict(list)
    for operation in operations:
        groups[base_tool_name(*operation[1:])].append(operation)
    result: dict[str, list[str]] = {}
    for group in groups.values():
        if len(group) == 1:
            key, operation_id, method, path = group[0]
            result[key] = tool_name_candidates(operation_id, method, path, target)
        else:
            result.update(_distinguished(group, target))
    return result


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


def _pick(won: list[str], target: int, cut: AbstractSet[str] = frozenset()) -> str | None:
    """The first name within `target`, else the shortest whole one, else the shortest `cut` one."""
    whole = [n for n in won if n not in cut]
    return next((n for n in whole if len(n) <= target), None) or min(whole or won, key=len, default=None)


def _words_within(name: str, limit: int) -> str:
    """The longest run of `name`'s first words within `limit` characters (at least a part of its first)."""
    kept = ""
    for word in name.split("_"):
        longer = f"{kept}_{word}" if kept else word
        if len(longer) > limit:
            break
        kept = longer
    while kept.count("_") and kept.rsplit("_", 1)[1] in _CONNECTORS:
        kept = kept.rsplit("_", 1)[0]
    return kept or name[:limit]


def unique_tool_names(
    items: Iterable[tuple[str, str | list[str]]], limit: int = MAX_TOOL_NAME, target: int = TARGET_TOOL_NAME
) -> dict[str, str]:
    """Map each key (`METHOD /path`) to a unique tool name, given (key, candidate names best first)
    pairs; a single base name stands for its `shorter_names`.

    Each key takes the first name within `target`, else the shortest, of the candidates it wins
    (see `_claims`); a name is never made shorter by leaving out words between others, which would
    make it say something else (`get_or_create_pipeline_run` is not `get_or_run`): a name that
    stays over `target` is kept whole, up to `limit`. Only a name past `limit` loses its last words.
    The outcome depends on the set of operations, never on their order; a key left with no name
    (its every candidate is also another's: a real collision) gets a hash of its own key, the one
    suffix that cannot collide.
    """
    wanted = {key: shorter_names(names_) if isinstance(names_, str) else list(names_) for key, names_ in items}
    # A name past `limit` is cut after its last whole word within it: a last resort, after every whole name.
    candidates: dict[str, list[str]] = {}
    cut: dict[str, set[str]] = {}
    for key, names_ in wanted.items():
        whole = [c for c in names_ if len(c) <= limit]
        shortened = [
            c for c in dict.fromkeys(_words_within(c, limit) for c in names_ if len(c) > limit) if c not in whole
        ]
        candidates[key], cut[key] = whole + shortened, set(shortened)
    # Rounds of claims: a key that won nothing (its names tied with others') competes again for the
    # names no key has taken, with the keys still without one. Each round depends on sets only.
    chosen: dict[str, str | None] = dict.fromkeys(candidates)
    while True:
        taken = set(chosen.values())
        open_ = {key: [c for c in candidates[key] if c not in taken] for key, name in chosen.items() if name is None}
        won = {key: _pick(names_, target, cut[key]) for key, names_ in _claims(open_).items()}
        if not any(won.values()):
            break
        chosen.update((key, name) for key, name in won.items() if name is not None)
    result: dict[str, str] = {}
    for key, name in chosen.items():
        if name is None:
            first = min(wanted[key] or [snake_case(key) or "op"], key=len)
            suffix = short_hash(key)
            name = _words_within(first, limit - len(suffix) - 1) + "_" + suffix
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


def _title_tokens(title: str) -> list[str]:
    text = re.sub(r"[\'\u2019]s\b", "", title)
    return re.findall(r"[A-Za-z0-9]+", unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii"))


def title_words(title: str, most: int = 3) -> list[str]:
    """The words of an API title that name it: `GitHub's official OpenAPI spec + Octokit extension`
    -> [github, octokit]. A word keeps its brand spelling (`GitHub`, `OpenAPI`: two capitals) and is
    split only when it runs several words together (`VirtualWANAsAServiceClient`); possessives,
    versions and words every API description uses go. A title of only those keeps its own words."""
    words: list[str] = []
    for token in _title_tokens(title):
        parts = snake_case(token).split("_")
        words.extend(parts if len(parts) > 2 else ["".join(parts)])
    kept = [w for w in words if w not in _TITLE_FILLER and not _NUMBER.match(w)]
    return (kept or [w for w in words if w not in _TITLE_STOP])[:most]


# Words of a title that no one chose to name the API: the web framework's own name, which is its
# default title (FastAPI's `FastAPI`, Django Ninja's `NinjaAPI`, APIFlask's `APIFlask`, Litestar's
# `Litestar API`, LoopBack's `LoopBack Application`), and placeholders (`My API`, `Untitled`,
# `Sample API`, .NET's `WebApplication1`). A package named after them would take a name that says
# nothing, or another project's (`fastapi-mcp` exists on PyPI and is unrelated).
_FRAMEWORK_WORDS = frozenset(
    {"fastapi", "ninja", "flask", "apiflask", "litestar", "loopback", "quart", "sanic", "starlette", "django"}
)
_PLACEHOLDER_WORDS = frozenset(
    {"my", "your", "untitled", "unnamed", "default", "sample", "example", "demo", "test", "new", "app", "application"}
    | {"title"}
)


def generic_title(title: str) -> bool:
    """Whether an API title holds no word that names the API: only words every API description uses,
    versions, framework names and placeholders (`FastAPI`, `API`, `OpenAPI definition`, `My API`,
    `Untitled`, ``). A token counts as one word (`fastapi`) or as its parts (`NinjaAPI`: ninja, api),
    and a numbered placeholder as the placeholder (`WebApplication1`; `Web3` names something)."""
    generic = _TITLE_FILLER | _FRAMEWORK_WORDS | _PLACEHOLDER_WORDS

    def says_nothing(word: str) -> bool:
        return word in generic or bool(_NUMBER.match(word)) or word.rstrip("0123456789") in _PLACEHOLDER_WORDS

    return all(
        says_nothing(token.lower()) or all(says_nothing(part) for part in snake_case(token).split("_"))
        for token in _title_tokens(title)
    )


def python_name(name: str) -> str:
    """A tool name as a module-level function name: builtins and keywords get a trailing `_`."""
    return name + "_" if name in _RESERVED else name


@functools.cache
def _refused_by_pydantic(name: str) -> bool:
    """Whether pydantic refuses, or warns about, `name` as a field of the SDK's argument model (a model
    built from the tool function's parameters): `model_config`, an attribute such as `model_fields`,
    its protected namespaces (`model_validate_x`). A method name is fine (the SDK aliases it: `json`),
    and so is `model_id` since pydantic 2.10. Asked of pydantic itself, so its rules are the ones kept."""
    if not name.startswith("model_") and not hasattr(pydantic.BaseModel, name):
        return False
    if callable(getattr(pydantic.BaseModel, name, None)):
        return False
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        try:
            fields: dict[str, Any] = {name: (int, ...)}
            pydantic.create_model("Arguments", **fields)
        except (pydantic.PydanticUserError, UserWarning, NameError, TypeError, ValueError):
            return True
    return False


def argument_name(wire_name: str) -> str:
    """A parameter's Python (and MCP argument) name: the wire name in snake_case, changed only where
    Python or pydantic would refuse it (a keyword, `model_config`, a leading digit)."""
    name = snake_case(wire_name) or "param"
    if name[0].isdigit():
        name = "p_" + name
    if name in _ARGUMENT_RESERVED or _refused_by_pydantic(name):
        name += "_"
    return name


def renamed_argument_note(wire_name: str, location: str, arg_name: str) -> str | None:
    """For an argument whose name is not the API's own (in snake_case): what the API calls it, for its
    description, so a description that says `model_config` still tells the model which argument that is."""
    if arg_name == snake_case(wire_name):
        return None
    return f"(`{arg_name}` is the API's {location} parameter `{wire_name}`.)"


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
        counts: defaultdict[str, int] = defaultdict(int)
        for _, _, name in by_location:
            counts[name] += 1
        for wire, location, name in by_location:
            if counts[name] > 1 or name in taken:
                name = f"{name}_{short_hash(wire + ' ' + location, 6)}"
            taken.add(name)
            result[(wire, location)] = name
    return result
