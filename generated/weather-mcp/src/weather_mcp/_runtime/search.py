"""Full-text search over the package's tools: SQLite FTS5 ranked with bm25.

The documents (`search.json`) are written when the package is generated: per tool, its name's words,
the keywords curation gives it, title, the intent words of its method and path shape, tags, path
words, parameter and body property names, description, and a short description for the results
(generator/typed_mcp/render/search.py), and apart, what its description says beyond the summary
(searched only for the words no tool's name holds); beside them, the synonyms the config adds to the
thesaurus.
The index is built in memory from them when a discovery-mode server starts (about 50 ms for a
thousand tools), not shipped as an SQLite file: a database file's bytes depend on the SQLite library
of the machine that generated it, and the package is compared byte for byte.
"""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

FORMAT = "typed-mcp-search/3"
# Indexed, in this order: the tool's name words, the keywords curation gives it, its summary, the
# intent words of its method and path shape ("list show all", "delete remove revoke"), tags (and their
# descriptions), path words, parameter and body property names, the description's first paragraph.
COLUMNS = ("name", "keywords", "title", "intent", "tags", "path", "params", "description")
# bm25 weight of each column, as measured on the tuning half of bench/search_tasks (the tags' weight
# is 0: a tag's words are in most tools' names already; they still count in how rare a word is, as
# bm25's IDF is counted over whole documents, and that measured better than leaving them out).
WEIGHTS = (8.0, 8.0, 4.0, 0.5, 0.0, 2.0, 1.0, 0.5)
# The columns that say what a tool is and does (for ranking by the query's concepts they hold), and
# how many of bm25's best are ranked that way.
STRONG = ("name", "keywords", "title", "path", "intent")
CANDIDATES = 200
DESCRIBED = 30  # the best described tools added to them for a word no tool's name holds
_WORD = re.compile(r"[^\W_]+")  # letters and digits: `pull_number` and `/repos/{owner}` split into words
# Words that say nothing about which tool (English stop words): left out of a query, unless the query
# has nothing else.
STOPWORDS = frozenset(
    """a about above after again against am an and any are as at be because been before being below
    between both but by can could did do does doing down during each few for from further had has have
    having he her here hers him his how i if in into is it its itself just let like me more most must my
    myself need no nor not now of off on once only or other our ours out over own please same she should
    so some someone something such than that the their theirs them then there these they this those
    through to too tool tools under until up us use using very want was way we were what when where which
    while who whom why will with would you your yours s t ll re ve d m""".split()
)
# A thesaurus of REST API vocabulary: query word -> the words APIs use for it (added to the query,
# so bm25 still ranks). Users say "show", "new", "remove", "repo", "PR", "cert"; operation names and
# summaries say "list", "create", "delete", "repository", "pull request", "certificate". A word in
# REPLACED is only searched as its synonyms ("logged in" is not about logs).
SYNONYMS: dict[str, tuple[str, ...]] = {}
for _target, _words in {
    # what is done
    "create": (
        "new add make publish post submit leave write register generate setup open file start provision "
        "launch spin host compose draft book schedule onboard"
    ),
    "list": "show all see view browse recent every enumerate who which what many",
    "get": "show fetch read view see detail details info retrieve look check what inspect describe lookup",
    "update": (
        "edit change modify rename set close reopen switch toggle mark turn adjust tweak configure "
        "reconfigure promote demote"
    ),
    "dispatch": "trigger",
    "delete": (
        "remove drop erase destroy wipe purge revoke uninstall unset clear kick offboard evict unlink "
        "disconnect detach unregister discard trash terminate decommission retire nuke"
    ),
    "cancel": "kill abort halt stop",
    "disable": "pause stop deactivate suspend",
    "enable": "resume activate unpause",
    "rerun": "retry restart redo",
    "redeliver": "resend redeliver",
    "search": "find lookup query where locate",
    "upload": "attach",
    "download": "fetch export",
    "transfer": "move hand",
    "fork": "clone copy duplicate",
    "star": "bookmark favorite favourite like",
    "compare": "diff difference changed between",
    "review": "approve reject lgtm",
    "comment": "reply respond note remark discuss discussion",
    "rollback": "revert undo restore",
    "run": "execute exec invoke ran running",
    "latest": "newest last current",
    "limit": "quota remaining left",
    # who and what it is done to
    "authenticated": "logged signed whoami me myself",
    "user": "logged signed whoami me myself account profile person people",
    "pull": "pr prs merge request",
    "repository": "repo repos project",
    "repositories": "repo repos projects",
    "organization": "org orgs company",
    "org": "organization organizations",
    "certificate": "cert certs ssl tls https",
    "credentials": "creds password passwords",
    "token": "creds credentials",
    "key": "keys secret",
    "configuration": "config settings options",
    "settings": "config configuration preferences options",
    "invitation": "invite invites invited",
    "issue": "ticket tickets bug bugs",
    "label": "tag",
    "member": "people person employee employees teammate colleague staff offboard onboard seat seats",
    "statistics": "stats analytics metrics usage",
    "logs": "log history output console stdout stderr trace",
    "audit": "history",
    "schedule": "cron recurring periodically every hourly daily weekly nightly",
    "archive": "download zip tarball",
    "deployment": "deploy rollout",
    "release": "ship version",
    "hook": "webhook callback",
    "database": "db",
    "image": "photo picture",
    "notification": "notify alert alerts page paging",
    "subscription": "subscribe watch plan recurring mute unwatch unsubscribe",
    "status": "succeeded success successful failed failure pending state",
    "secret": "key keys password passwords credential credentials token",
    "permission": "access rights privileges allowed",
    "add": "put",
    "site": "website websites homepage",
    "zone": "domain domains site sites",
    "firewall": "block blocking ban deny allowlist blocklist",
    "service": "bot robot",
    "health": "ping uptime healthz",
    "balancer": "spread distribute failover",
    # the names of things in common APIs, as users say them
    "lock": "freeze",
    "unlock": "unfreeze",
    "merge": "squash land",
    "accept": "join",
    "reject": "decline refuse deny",
    "block": "ban banned blacklist blocklist",
    "unblock": "unban",
    "follow": "following follower followers",
    "assign": "assignee assignees",
    "export": "backup dump",
    "import": "restore migrate load",
    "verify": "validate valid",
    "copy": "duplicate clone",
    "send": "email mail message",
    "resend": "retry",
    "count": "total number",
    "role": "admin administrator",
    "group": "team",
    "team": "group squad",
    "folder": "directory dir",
    "file": "document doc",
    "event": "activity",
    "usage": "consumption spend",
    "billing": "invoice invoices bill cost costs charges",
    "environment": "env envs staging production prod",
    "variable": "var vars",
    "domain": "hostname hostnames",
    "hostname": "domain subdomain",
    "record": "entry entries",
    "address": "ip",
    "webhook": "callback notify ping",
    "policy": "rule rules",
    "rule": "policy policies",
    "report": "summary dashboard",
    "metrics": "dashboard performance latency",
    "message": "text sms dm chat",
    "channel": "room",
    "phone": "dial call calls",
    "participant": "attendee attendees joined",
    "registrant": "signup signups registration registrations registered",
    "meeting": "call calls conference standup sync",
    "webinar": "seminar broadcast townhall",
    "recording": "recorded recordings video transcript",
    "payment": "pay paid charge",
    "refund": "reimburse",
    "customer": "client buyer",
    "merge_request": "mr mrs",
    "commit": "commits sha change changes",
    "branch": "branches",
    "workflow": "pipeline pipelines ci automation",
    "pipeline": "ci build builds workflow",
    "job": "step build",
    "runner": "agent machine worker",
    "artifact": "artifacts binary binaries output",
    "gist": "snippet snippets paste",
    "snippet": "gist paste",
    "topic": "topics tag tags",
    "code scanning": "codeql sast analysis static",
    "secret scanning": "leak leaked exposed",
    "dependabot": "dependency dependencies vulnerable vulnerability vulnerabilities cve",
    "advisory": "cve vulnerability vulnerabilities",
    "vulnerability": "cve vulnerable exploit",
    "codespace": "ide devbox",
    "copilot": "ai assistant",
    "pages": "static website hosting",
    "traffic": "visitors views referrers",
    "protection": "protect protected",
    "collaborator": "outside contributor access",
    "milestone": "sprint deadline",
    "dns": "nameserver nameservers resolver",
    "cache": "cdn cached",
    "purge": "flush invalidate",
    "worker": "function functions serverless edge",
    "r2": "bucket buckets object storage s3",
    "kv": "key value store",
    "d1": "sql sqlite",
    "tunnel": "expose cloudflared",
    "access": "sso login zero trust",
    "waf": "attack attacks exploit",
    "load balancer": "failover",
    "rate limit": "throttle throttling",
}.items():
    for _word in _words.split():
        SYNONYMS[_word] = (*SYNONYMS.get(_word, ()), _target)
# Phrases that mean one word (looked up before the words): "turn off", "get rid of", "set up".
PHRASES = {
    "turn off": "disable",
    "switch off": "disable",
    "turn on": "enable",
    "switch on": "enable",
    "get rid of": "delete",
    "set up": "create",
    "sign up": "create",
    "take a look": "review",
    "how many": "count",
    "who am i": "authenticated",
}
# Values in a query stand for what they are: "block 198.51.100.4" is about an IP, "api.example.com" a
# host name, "v1.2.0" a version, "9fceb02" a commit SHA, not about the words "example" or "com".
VALUES = (
    (re.compile(r"\b\d{1,3}(?:\.\d{1,3}){3}(?:/\d{1,2})?\b"), "ip address"),
    (re.compile(r"\b[\w.+-]+@[\w-]+(?:\.[\w-]+)+\b"), "email address"),
    (re.compile(r"\bv?\d+(?:\.\d+){1,3}\b"), "version"),
    (
        re.compile(r"\b(?:[a-z0-9-]+\.)+(?:com|net|org|io|dev|app|co|uk|de|fr|info|biz|xyz)\b", re.IGNORECASE),
        "domain",
    ),
    (re.compile(r"\b(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{7,40}\b"), "sha commit"),
    (re.compile(r"\b[\w-]+\.(?:json|ya?ml|md|txt|js|ts|py|log|csv|xml|html|toml|lock|zip|gz|tgz)\b", re.I), "file"),
    (re.compile(r"#\d+\b"), "number"),
    # A path, a branch or an `owner/name` ("feature/login", "/admin", "octo/widgets") and quoted text
    # are arguments: their words are not what the request does.
    (re.compile(r"\S*\w/\S*|(?<!\w)/\S+"), " "),
    (re.compile(r"(?<!\w)(['\"\u2018\u201c])[^'\"\u2019\u201d]{1,60}['\"\u2019\u201d](?!\w)"), " "),
)
# The words of a request to remove (a tool of that kind is only first when one of them is asked for),
# and the first words of a question.
REMOVAL = frozenset("delete remove revoke cancel drop clear unset".split())
QUESTION = frozenset(
    "who whom whose what which when where why how is are am was were do does did can could has have had".split()
)
REPLACED = frozenset({"logged", "signed", "whoami", "me", "myself", "pr", "prs"})


@dataclass(frozen=True)
class Thesaurus:
    """What a query's words and phrases mean in API words: SYNONYMS and PHRASES, and those the
    package's config adds (`search.json`'s "synonyms": an API word -> the words users say for it)."""

    words: Mapping[str, tuple[str, ...]]
    phrases: Mapping[str, tuple[str, ...]]

    def extended(self, added: Mapping[str, Iterable[str]]) -> Thesaurus:
        table, phrases = dict(self.words), dict(self.phrases)
        for target, said in added.items():
            meaning = " ".join(words(target))
            for text in said:
                found = words(text)
                into = table if len(found) == 1 else phrases
                key = " ".join(found)
                if found and meaning not in into.get(key, ()):
                    into[key] = (*into.get(key, ()), meaning)
        return Thesaurus(table, phrases)

    def synonyms(self, token: str) -> tuple[str, ...]:
        for form in _forms(token):
            if form in self.words:
                return self.words[form]
        return ()


THESAURUS = Thesaurus(SYNONYMS, {phrase: (target,) for phrase, target in PHRASES.items()})


class SearchUnavailable(RuntimeError):
    pass


def load(path: Path) -> tuple[list[dict[str, str]], Thesaurus]:
    """A package's `search.json`: its documents, and the thesaurus with the config's synonyms."""
    data = json.loads(path.read_bytes())
    if data.get("format") != FORMAT:
        raise SearchUnavailable(f"{path.name}: not a {FORMAT} file (regenerate the package)")
    return data["tools"], THESAURUS.extended(data["synonyms"])


class SearchIndex:
    """An in-memory FTS5 index of `documents` (those named in `only`, when given)."""

    def __init__(
        self, documents: Iterable[Mapping[str, str]], only: set[str] | None = None, thesaurus: Thesaurus = THESAURUS
    ) -> None:
        self.thesaurus = thesaurus
        self.db = sqlite3.connect(":memory:", check_same_thread=False)
        try:
            self.db.execute(f"CREATE VIRTUAL TABLE docs USING fts5({', '.join(COLUMNS)}, tokenize='porter unicode61')")
        except sqlite3.OperationalError as exc:  # an SQLite built without FTS5
            raise SearchUnavailable(f"discovery mode needs SQLite with FTS5: {exc}") from None
        self.docs = [doc for doc in documents if only is None or doc["tool"] in only]
        self.db.executemany(
            f"INSERT INTO docs (rowid, {', '.join(COLUMNS)}) VALUES (?, {', '.join('?' for _ in COLUMNS)})",
            [(number, *(doc[column] for column in COLUMNS)) for number, doc in enumerate(self.docs)],
        )
        self.db.execute("CREATE VIRTUAL TABLE notes USING fts5(about, tokenize='porter unicode61')")
        self.db.executemany(
            "INSERT INTO notes (rowid, about) VALUES (?, ?)", [(n, doc["about"]) for n, doc in enumerate(self.docs)]
        )
        self.db.commit()
        weights = ", ".join(str(w) for w in WEIGHTS)
        self._query = f"SELECT rowid FROM docs WHERE docs MATCH ? ORDER BY bm25(docs, {weights}), rowid LIMIT ?"
        self._matching = "SELECT rowid FROM docs WHERE docs MATCH ?"
        self._notes = "SELECT rowid FROM notes WHERE notes MATCH ?"
        self._described = "SELECT rowid FROM notes WHERE notes MATCH ? ORDER BY bm25(notes), rowid LIMIT ?"

    def search(self, query: str, limit: int = 10) -> list[dict[str, Any]]:
        """The best `limit` tools for `query`, best first: [{"name", "title", "description"}].

        bm25 over any of the query's words picks the candidates; they are ranked first by how many
        of the query's concepts (a word with its synonyms) their name, title, path or intent hold,
        then by whether they do the kind of thing asked (`_unlike`), then by bm25. A tool that names
        two of the things asked for beats one that repeats a single rare word of the query (an
        argument's value, say) many times."""
        groups = concepts(query, self.thesaurus)
        if not groups or limit < 1:
            return []
        terms = _any(term for group in groups for term in group)
        rows = self.db.execute(self._query, (terms, CANDIDATES)).fetchall()
        # The tools holding each concept in the columns that say what a tool is and does. A word no
        # tool holds there is looked for in the descriptions: the best described tools join the
        # candidates, and a description holding it counts as holding it.
        holders = [{rowid for (rowid,) in self.db.execute(self._matching, (_strong(group),))} for group in groups]
        unnamed = [group for group, found in zip(groups, holders, strict=True) if not found]
        if unnamed:
            seen = {row[0] for row in rows}
            rows += [row for row in self.db.execute(self._described, (terms, DESCRIBED)) if row[0] not in seen]
            holders += [{rowid for (rowid,) in self.db.execute(self._notes, (_any(group),))} for group in unnamed]
        if len(groups) > 1 and rows:
            held = {row[0]: sum(row[0] in found for found in holders) for row in rows}
            order = {row[0]: position for position, row in enumerate(rows)}
            unlike = self._unlike(query, groups)
            rows = sorted(rows, key=lambda row: (-held[row[0]], unlike(self.docs[row[0]]), order[row[0]]))
        return [self.result(self.docs[row[0]]) for row in rows[:limit]]

    @staticmethod
    def _unlike(query: str, groups: list[list[str]]) -> Callable[[Mapping[str, str]], int]:
        """How far a tool is from the kind of thing the query asks (the first word of a tool's intent
        is its kind): among tools that hold as many of the query's concepts, one that removes comes
        last unless the query asks to remove, and one that writes comes after the reads when the
        query is a question."""
        removes = any(term in REMOVAL for group in groups for term in group)
        asks = is_question(query)

        def unlike(doc: Mapping[str, str]) -> int:
            kind = doc["intent"].partition(" ")[0]
            if kind == "delete" and not removes:
                return 2
            return int(asks and kind not in ("list", "get"))

        return unlike

    @staticmethod
    def result(doc: Mapping[str, str]) -> dict[str, Any]:
        return {"name": doc["tool"], "title": doc["title"] or None, "description": doc["summary"]}


def is_question(query: str) -> bool:
    """A question ("who follows octocat?", "which sites are down"): what it asks for is read."""
    found = words(query)
    return query.rstrip().endswith("?") or bool(found) and found[0] in QUESTION


def words(text: str) -> list[str]:
    return [word.lower() for word in _WORD.findall(text)]


def _forms(token: str) -> list[str]:
    """`token` and its forms without an English ending (`tickets`, `starred`, `bookmarking`), for the
    thesaurus look-up (bm25 matches with the porter stemmer anyway)."""
    forms = [token]
    for ending in ("ing", "ed", "es", "s", "d"):
        if token.endswith(ending) and len(token) - len(ending) >= 3:
            stem = token[: -len(ending)]
            forms += [stem, stem[:-1]] if len(stem) > 3 and stem[-1] == stem[-2] else [stem]
    return forms


def concepts(query: str, thesaurus: Thesaurus = THESAURUS) -> list[list[str]]:
    """The query's concepts, each a list of FTS5 terms: a word (or a phrase's meaning) and its synonyms,
    without the stop words when other words remain."""
    for pattern, meaning in VALUES:
        query = pattern.sub(f" {meaning} ", query)
    text = f" {' '.join(words(query))} "
    groups = []
    for phrase, targets in thesaurus.phrases.items():  # a phrase's words are searched as its meaning only
        if f" {phrase} " in text:
            groups.append(list(targets))
            text = text.replace(f" {phrase} ", " ")
    tokens = [token for token in dict.fromkeys(words(text)) if len(token) > 1 or token.isdigit()]
    found = {token: thesaurus.synonyms(token) for token in tokens}
    meaningful = [token for token in tokens if token not in STOPWORDS or found[token]] or tokens
    for token in meaningful:
        group = [token] if token not in STOPWORDS and token not in REPLACED or not found[token] else []
        groups.append(list(dict.fromkeys([*group, *found[token]])))
    return groups


def _strong(group: list[str]) -> str:
    """An FTS5 expression: any of `group`'s terms in the columns that say what a tool is and does."""
    return f"{{{' '.join(STRONG)}}} : ({_any(group)})"


def _any(terms: Iterable[str]) -> str:
    """An FTS5 expression matching any of `terms`, each quoted, so nothing in them is FTS5 syntax."""
    return " OR ".join(f'"{term}"' for term in dict.fromkeys(terms))
