"""`search.json`: the documents discovery mode's full-text search indexes (`_runtime/search.py`).

One document per tool, made from the operation alone, so that the words people use for a request
find it, whatever the API: the tool's name words, the keywords curation gives it (x-mcp, config),
its title, the intent words of its HTTP method and path shape (a GET on a collection lists, a DELETE
removes: "show", "remove", "revoke" match the operation even when its title says "List" or
"Delete"), the path words and the one that names what it acts on (`resource`), the tags and their
descriptions, the parameter and request body property names, and the first paragraph of the
description (the title, when the spec has a summary: the rest of a description, and the parameters'
descriptions, measured worse, their words match too many requests). Apart ("about"), the description
beyond the title, without its quoted notes: the runtime looks there only for a word no tool's name
holds. Spec prose is read as plain text (`plan/prose.py`: CommonMark and HTML). For the results: the
operation, the first sentence of the description beyond the title, what tells the tool from others
of the same title, its toolset (for browsing) and whether it is deprecated.
Beside them: the toolsets an agent browses (`toolsets`), the vocabulary of this API (`vocabulary`:
its abbreviations and clippings, and the words users say for the things it names,
render/vocabulary.py), and the config's search synonyms.
Deterministic: the same plan and spec give the same bytes.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any, NamedTuple

from typed_mcp import names
from typed_mcp.plan import prose
from typed_mcp.plan.ir import ApiPlan, Operation
from typed_mcp.render.vocabulary import vocabulary
from typed_mcp.runtime.contracts import REMOVAL_WORDS, SEARCH_FORMAT, SEARCH_WORD

_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_VERSION = re.compile(r"v\d+([a-z]+\d*)?|\d+(\.\d+)*|api", re.IGNORECASE)

# Words for what an operation does, by its method and path shape: what a user says for it.
LIST = "list show all view see browse find which"
GET = "get show view see details info read fetch check"
CREATE = "create add new make start submit"
UPDATE = "update change edit set modify"
REPLACE = "update set replace put add"
DELETE = " ".join(REMOVAL_WORDS)
# The verbs a remote procedure's last path segment begins with ("get_my_user", "list"), by what they do.
_NAMED = {
    **dict.fromkeys(("list", "search"), LIST),
    **dict.fromkeys(("get", "retrieve", "read", "fetch", "show", "describe"), GET),
    **dict.fromkeys(("create", "add", "new"), CREATE),
    **dict.fromkeys(("update", "edit", "modify", "set", "rename"), UPDATE),
    **dict.fromkeys(("delete", "remove", "destroy"), DELETE),
}
_VERB = re.compile(rf"({'|'.join(_NAMED)})(?:$|[_\-])", re.IGNORECASE)
PAGINATION = frozenset({"page", "per_page", "limit", "cursor", "offset", "page_size", "per-page", "after", "before"})
# A toolset bigger than this is split by path resource, so that an agent can read one whole.
TOOLSET_SIZE = 40
SMALLEST = 3
NAME_SIZE = 48  # characters of a toolset's name (each of its dotted parts)
UNTAGGED = "untagged"  # the toolset of the operations without a tag
_DESCRIBED = 90  # characters of a toolset's one-line description


def _words(*texts: str) -> str:
    """Lower-case words of `texts`: `pull_number`, `/repos/{owner}` and `dnsRecords` split into words."""
    return " ".join(word.lower() for text in texts for word in SEARCH_WORD.findall(_CAMEL.sub(" ", text)))


def _segments(path: str) -> list[str]:
    return [segment for segment in path.split("/") if segment]


def _is_parameter(segment: str) -> bool:
    return "{" in segment


def collections(plan: ApiPlan) -> set[str]:
    """The paths that hold a collection: read with a GET, or with items below them (`/x/{id}`)."""
    found = {op.path for op in plan.operations if op.method in ("GET", "HEAD")}
    for op in plan.operations:
        segments = op.path.rstrip("/").split("/")
        if len(segments) > 1 and _is_parameter(segments[-1]):
            found.add("/".join(segments[:-1]))
    return found


def intent(op: Operation, held: set[str]) -> str:
    """The words for what `op` does, from its method and path shape (and whether it pages). `held`:
    the API's collections (`collections`). A POST to a path that names a verb does what it names
    (`/api/users/list` lists); else it creates, unless it is sent to an item (it changes
    it: `/customers/{id}`) or after one to a path that is no collection (`/payouts/{id}/cancel`: the
    action its path names, which the tool's name says)."""
    if op.method in ("GET", "HEAD"):
        pages = any(p.wire_name.lower() in PAGINATION for p in op.parameters)
        return LIST if pages or op.returns_array else GET
    if op.method == "POST":
        segments = _segments(op.path)
        if segments and _is_parameter(segments[-1]):
            return UPDATE
        named = _VERB.match(segments[-1].rpartition(".")[2]) if segments else None
        if named:  # a remote procedure's path names its verb: `/api/users/list`, `/conversations.list`
            return _NAMED[named[1].lower()]
        if op.path in held:
            return CREATE
        if len(segments) > 1 and _is_parameter(segments[-2]):
            return ""
        return CREATE
    if op.method == "PATCH":
        return UPDATE
    if op.method == "PUT":
        return REPLACE
    if op.method == "DELETE":
        return DELETE
    return ""


def details(op: Operation) -> str:
    """The operation's description after its title: what the spec says of it beyond that."""
    text = op.description or ""
    if op.deprecated and text.startswith("Deprecated."):
        text = text[len("Deprecated.") :].lstrip()
    if op.title and text.startswith(op.title):  # a title from the description ends where its sentence did
        text = text[len(op.title) :].lstrip(".!?").lstrip()
    return "" if text == op.key else text


def tag_descriptions(plan: ApiPlan) -> dict[str, str]:
    return {tag.name: prose.first_sentence(tag.description) for tag in plan.tags if tag.name is not None}


def distinctions(plan: ApiPlan) -> dict[str, str]:
    """Tool -> what tells it from the other tools of its title: the path words they do not all
    share, else the parameters, else the method ("Create or update a repository secret" is one
    title of four tools: `actions`, `codespaces`, `dependabot`...)."""
    by_title: dict[str, list[Operation]] = {}
    for op in plan.operations:
        if op.title:
            by_title.setdefault(_words(op.title), []).append(op)
    found = {}
    kinds: tuple[Callable[[Operation], list[str]], ...] = (
        lambda o: _words(*(s for s in _segments(o.path) if not _is_parameter(s))).split(),
        lambda o: [p.arg_name for p in o.parameters],
        lambda o: [o.method],
    )
    for ops in by_title.values():
        if len(ops) < 2:
            continue
        # Each kind of words is read once per tool, and what the group shares once per group: a title
        # that thousands of tools share (Microsoft Graph's) made this quadratic.
        read: dict[int, tuple[list[list[str]], set[str]]] = {}
        for index, op in enumerate(ops):
            for kind, words_of in enumerate(kinds):
                if kind not in read:
                    each = [words_of(other) for other in ops]
                    read[kind] = (each, set.intersection(*(set(words) for words in each)))
                each, shared = read[kind]
                own = [word for word in dict.fromkeys(each[index]) if word not in shared]
                if own:
                    found[op.tool_name] = prose.clip(" ".join(own), 60)
                    break
    return found


def acted_on(path: str) -> str:
    """The word that names what an operation acts on: the last word of its path's last literal
    segment that is no version (`/repos/{owner}/{repo}/forks`: "forks"; `/user/repos`: "repos")."""
    for segment in reversed(_literal(path)):
        found = _words(segment).split()
        if found:
            return found[-1]
    return ""


def _literal(path: str) -> list[str]:
    """The word segments of `path`: no parameter, no version."""
    return [s for s in _segments(path) if not _is_parameter(s) and not _VERSION.fullmatch(s)]


def _resource(op: Operation, depth: int, anchor: list[str]) -> str:
    """The path resource `op` is filed under when its toolset is split: the first word segment of its
    path after the toolset's own word (`/repos/{owner}/{repo}/branches/...` in `repos`: `branches`;
    a clipping names it too, `/repos/...` in `repository`), else after the first `depth` word
    segments of its path; "" at the path's end."""
    literal = _literal(op.path)
    start = depth
    for index, segment in enumerate(literal):
        if _names_one_of(names.singular(names.snake_case(segment)), anchor):
            start = max(start, index + 1)
    rest = literal[start:]
    return _toolset_name(rest[0]) if rest else ""


def _names_one_of(word: str, anchor: list[str]) -> bool:
    """Whether `word` is one of `anchor`'s words, or a clipping or long form of one (`repo` of
    `repository`: one word of at least three letters that the other begins with)."""
    return any(word == held or _clips(word, held) for held in anchor)


def _clips(word: str, other: str) -> bool:
    shorter, longer = sorted((word, other), key=len)
    return "_" not in longer and len(shorter) >= 3 and longer.startswith(shorter)


def _shared(ops: list[Operation]) -> int:
    """How many word segments every one of `ops`' paths begins with (and has more after): context,
    not a resource (`/repos/{owner}/{repo}/labels` among the issues' tools is about labels)."""
    literals = [_literal(op.path) for op in ops]
    common = 0
    while all(len(literal) > common + 1 and literal[common] == literals[0][common] for literal in literals):
        common += 1
    return common


def _toolset_name(text: str) -> str:
    """`text` in snake_case, at most NAME_SIZE characters (a longer one ends with a hash of it)."""
    name = names.snake_case(text)
    return name if len(name) <= NAME_SIZE else f"{name[: NAME_SIZE - 9]}_{names.short_hash(name)}"


def _split(name: str, ops: list[Operation], anchor: list[str], depth: int = 0) -> dict[str, list[Operation]]:
    """`name`'s tools, split by path resource (and split again) while a part holds more than
    TOOLSET_SIZE tools and the paths tell them apart. A resource of fewer than SMALLEST tools (an
    action on an item: `/codespaces/{name}/start`) stays with the tools on the toolset's own resource,
    in `name.<its word>`."""
    if len(ops) <= TOOLSET_SIZE or depth > 4:
        return {name: ops}
    depth = max(depth, _shared(ops))
    by: dict[str, list[Operation]] = {}
    spelled: dict[str, str] = {}
    for op in ops:
        resource = _resource(op, depth, anchor)
        found = names.singular(resource)
        by.setdefault(found, []).append(op)
        spelled[found] = max(spelled.get(found, resource), resource, key=lambda word: (len(word), word))
    own = names.singular(name.rsplit(".", 1)[-1])
    for found in [found for found, members in by.items() if len(members) < SMALLEST and found != own]:
        by.setdefault(own, []).extend(by.pop(found))
    if "" in by:
        by.setdefault(own, []).extend(by.pop(""))
    if len(by) < 2:  # one resource: the next path segment may tell them apart
        deeper = any(_resource(op, depth + 1, anchor) for op in ops)
        return _split(name, ops, anchor, depth + 1) if deeper else {name: ops}
    parts: dict[str, list[Operation]] = {}
    order = {op.key: position for position, op in enumerate(ops)}
    for found, members in by.items():
        word = spelled.get(found) or name.rsplit(".", 1)[-1]
        members.sort(key=lambda op: order[op.key])  # in the spec's order
        parts.update(_split(f"{name}.{word}", members, [*anchor, found], depth + 1))
    return parts


class Browse(NamedTuple):
    """The toolsets an agent browses: computed once per package, read by search.json and the toolsets list."""

    toolset_of: dict[str, str]  # tool -> its toolset (a split tag's part, else the tag's)
    listed: list[dict[str, str]]  # each toolset's name and one-line description, in order


def browse_toolsets(plan: ApiPlan) -> Browse:
    """Tool -> its toolset for browsing, and the toolsets (name, one-line description), in order.

    A toolset is an operation's first tag in snake_case (the name `--toolsets` takes); the untagged
    operations are one more. Small tags about one thing are one toolset (`_gathered`), so an agent
    that finds one finds the others; one that holds more than TOOLSET_SIZE tools is split by path
    resource into `tag.resource` toolsets, so each one can be listed whole; the tag's name still
    holds all of them."""
    described = tag_descriptions(plan)
    tagged: dict[str, list[Operation]] = {}
    tag_of: dict[str, str] = {}
    for op in plan.operations:
        tag = next((t for t in op.tags if names.snake_case(t)), None)
        name = _toolset_name(tag) if tag else UNTAGGED
        tagged.setdefault(name, []).append(op)
        if tag and name not in tag_of:
            tag_of[name] = tag
    gathered = _gathered(tagged)
    toolset_of: dict[str, str] = {}
    listed: list[dict[str, str]] = []
    for name in sorted(gathered):
        ops = [op for tag in gathered[name] for op in tagged[tag]]
        if len(gathered[name]) > 1:  # what the tags it gathers are called says what it holds
            about = "; ".join(tag_of[tag] for tag in gathered[name])
        else:
            about = described.get(tag_of.get(name, ""), "") or _titles(ops)
        parts = _split(name, ops, [names.singular(name)])
        listed.append({"name": name, "description": prose.clip(about, _DESCRIBED)})
        if len(parts) > 1:
            for part in sorted(parts):
                listed.append({"name": part, "description": prose.clip(_titles(parts[part]), _DESCRIBED)})
        for part, members in parts.items():
            for op in members:
                toolset_of[op.tool_name] = part
    return Browse(toolset_of, listed)


def _gathered(tagged: dict[str, list[Operation]]) -> dict[str, list[str]]:
    """Toolset -> the tags it holds: small tags about one thing are browsed as one toolset, while
    together they hold at most TOOLSET_SIZE tools. A tag whose words begin with another tag's joins
    it ("task assignments" in `tasks`, "file version retentions" in `files`: the shortest with room),
    then tags that begin with the same words, which no tag is, join under those words ("shared links
    (files)" and "shared links (folders)" in `shared_links`). Each step looks up word prefixes, so the
    work grows with the number of tags, not its square."""
    spelled = {name: name.split("_") for name in tagged if name != UNTAGGED}
    key = {name: tuple(names.singular(word) for word in words) for name, words in spelled.items()}
    by_key = {found: name for name, found in sorted(key.items(), reverse=True)}
    gathered = {name: [name] for name in tagged}
    size = {name: len(ops) for name, ops in tagged.items()}
    for name in sorted(key, key=lambda name: (len(key[name]), name)):
        for length in range(1, len(key[name])):
            into = by_key.get(key[name][:length])
            if into in gathered and into != name and size[into] + size[name] <= TOOLSET_SIZE:
                gathered[into].extend(gathered.pop(name))
                size[into] += size.pop(name)
                break
    for depth in (1, 2, 3):
        shared: dict[tuple[str, ...], list[str]] = {}
        for name in sorted(gathered):
            if name in key and len(key[name]) > depth:
                shared.setdefault(key[name][:depth], []).append(name)
        for alike in shared.values():
            common = depth  # the words they all begin with
            while all(len(key[name]) > common + 1 and key[name][common] == key[alike[0]][common] for name in alike):
                common += 1
            joined = "_".join(spelled[alike[0]][:common])
            if len(alike) < 2 or joined in gathered or sum(size[name] for name in alike) > TOOLSET_SIZE:
                continue
            gathered[joined] = [tag for name in alike for tag in gathered.pop(name)]
            size[joined] = sum(size.pop(name) for name in alike)
            key[joined], spelled[joined] = key[alike[0]][:common], spelled[alike[0]][:common]
    return gathered


def _titles(ops: list[Operation]) -> str:
    """What a toolset holds, for its description: its tools' titles (or names), in order."""
    return "; ".join(dict.fromkeys(op.title or op.tool_name for op in ops))


def search_documents(plan: ApiPlan, browse: Browse) -> str:
    """`search.json`, one document a line; `browse`: the plan's `browse_toolsets`."""
    described = tag_descriptions(plan)
    distinct = distinctions(plan)
    held = collections(plan)
    toolset_of, toolsets = browse
    docs = []
    for op in plan.operations:
        params = [p.arg_name for p in op.parameters]
        if op.body is not None:
            params += [op.body.arg_name, *op.body_words]
        beyond = details(op)
        entry: dict[str, Any] = {
            "tool": op.tool_name,
            "operation": f"{op.method} {op.path}",
            "name": _words(op.tool_name),
            "keywords": _words(*op.keywords),
            "title": op.title or "",
            "intent": intent(op, held),
            "tags": " ".join([_words(*op.tags), *(described[tag] for tag in op.tags if tag in described)]),
            "path": _words(op.path),
            "resource": acted_on(op.path),
            "params": " ".join(dict.fromkeys(_words(*params).split())),
            "description": prose.first_paragraph(op.description),
            "about": prose.first_paragraph(beyond, quotes=False),
            "sentence": prose.first_sentence(beyond),
            "distinct": distinct.get(op.tool_name, ""),
            "toolset": toolset_of[op.tool_name],
        }
        if op.deprecated:
            entry["deprecated"] = True
        docs.append(entry)
    lines = ",\n".join(json.dumps(doc, ensure_ascii=False, separators=(",", ":")) for doc in docs)  # one a line
    head = {
        "format": SEARCH_FORMAT,
        "synonyms": plan.search_synonyms,
        "vocabulary": vocabulary(plan),
        "toolsets": toolsets,
    }
    opening = json.dumps(head, ensure_ascii=False, separators=(",", ":"))[:-1]
    return f'{opening},"tools":[\n{lines}\n]}}\n'
