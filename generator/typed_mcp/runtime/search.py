"""Full-text search over the package's tools: SQLite FTS5 ranked with bm25.

The documents (`search.json`) are written when the package is generated: per tool, its name's words,
the keywords curation gives it, title, the intent words of its method and path shape, tags, path
words, parameter and body property names, description, the path word naming what it acts on, and for
the results its operation, the first sentence of its description beyond the title, what tells it
from tools of the same title, its toolset and whether it is deprecated
(generator/typed_mcp/render/search.py), and apart, what its description says beyond the title
(searched only for the words no tool's name holds); beside them, the toolsets to browse, the API's
own vocabulary and the synonyms the config adds to the thesaurus. The index is built in memory from
them when a discovery-mode server starts (about 50 ms for a thousand tools), not shipped as an
SQLite file: a database file's bytes depend on the SQLite library of the machine that generated it,
and the package is compared byte for byte.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, NamedTuple

from .contracts import SEARCH_FORMAT, SEARCH_WORD
from .vocabulary import KINDS, PHRASES, QUESTION, REMOVAL, REPLACED, STOPWORDS, SYNONYMS, VALUES

# Indexed, in this order: the tool's name words, the keywords curation gives it, its summary, the
# intent words of its method and path shape ("list show all", "delete remove revoke"), tags (and their
# descriptions), path words, parameter and body property names, the description's first paragraph,
# and the path word that names what the tool acts on (`forks` in `POST /repos/{owner}/{repo}/forks`).
COLUMNS = ("name", "keywords", "title", "intent", "tags", "path", "params", "description", "resource")
# bm25 weight of each column, as measured on the tuning half of bench/search_tasks (the tags' weight
# is 0: a tag's words are in most tools' names already; they still count in how rare a word is, as
# bm25's IDF is counted over whole documents, and that measured better than leaving them out). The
# resource's is 0: it is one of the path words, there only to be matched alone (`SHORT`).
WEIGHTS = (8.0, 8.0, 4.0, 0.5, 0.0, 2.0, 1.0, 0.5, 0.0)
# The columns that say what a tool is and does (for ranking by the query's concepts they hold), and
# how many of bm25's best are ranked that way.
STRONG = ("name", "keywords", "title", "path", "intent")
CANDIDATES = 200
NEAR = 3  # adjacent query words count again where at most this many words part them in a column
EXACT = ("title", "name", "sentence")  # what a query may be exactly, in this order of precedence
LEVELS = 3  # word for word, without stop words, without word endings (`_said`)
DESCRIBED = 30  # the best described tools added to them for a word no tool's name holds
# A request of at most SHORT concepts ("fork a repository", "create a payout") names the thing it acts
# on: among tools holding as many of its concepts, those whose path ends in a thing it names come first
# (the fork, not a fork setting). In longer requests, told as users tell them, such a word is as often
# context ("the origins in the eu pool"): measured on every task set, 2 and 3 gained on the plain and
# terse requests and cost no blind set; with every request, the tuning sets lost 7 of 148 top-5 hits.
SHORT = 3
# With the optional semantic ranking (`semantic.py`): how many of its nearest tools join the candidates,
# and reciprocal rank fusion's k and the semantic ranking's weight: a tool gets 1 / (FUSION + its rank)
# from the full-text ranking, w / (FUSION + its rank) from the semantic one, where w goes from MISSED,
# when the full-text ranking's best holds none of the query's concepts in what says what it is and does,
# down to MATCHED when it holds them all (the words found it; where they did not, meaning may). Chosen
# on the tuning sets (github.json, cloudflare.json, blind/): k 5/10/15/20, 30/50 nearest, w 0 to 2.
NEAREST = 30
FUSION = 10
MATCHED, MISSED = 0.25, 1.0
# The results an agent reads before it browses keep the ranking's order; the places after them go
# first to tools of toolsets not shown yet (`_browsable`): measured on every task set, the top 5 as
# it was and one search plus one browse better on each (blind2 71 -> 75 of 90).
KEPT = 5
PAGE = 10


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


class Loaded(NamedTuple):
    """A package's `search.json`: its documents, the thesaurus with this API's vocabulary and the
    config's synonyms, and the toolsets to browse ({name, description}, in order)."""

    tools: list[dict[str, Any]]
    thesaurus: Thesaurus
    toolsets: list[dict[str, str]]


def load(path: Path) -> Loaded:
    data = json.loads(path.read_bytes())
    if data.get("format") != SEARCH_FORMAT:
        raise SearchUnavailable(f"{path.name}: not a {SEARCH_FORMAT} file (regenerate the package)")
    thesaurus = THESAURUS.extended(data["vocabulary"]).extended(data["synonyms"])
    return Loaded(data["tools"], thesaurus, data["toolsets"])


class SearchIndex:
    """An in-memory FTS5 index of `documents` (those named in `only`, when given)."""

    def __init__(
        self, documents: Iterable[Mapping[str, Any]], only: set[str] | None = None, thesaurus: Thesaurus = THESAURUS
    ) -> None:
        self.thesaurus = thesaurus
        self.db = sqlite3.connect(":memory:", check_same_thread=False)  # searched from worker threads
        self.lock = threading.Lock()  # one search at a time on the one connection
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
        # What a tool says it is, as a query would say it: its title, its name, its description's
        # first sentence. A query that is one of them word for word finds that tool first; then one
        # that is one of them give or take stop words and word endings ("Get Dag Runs" is exactly one
        # tool and nearly another, "Get Dag Run").
        self.exact: dict[tuple[str, ...], dict[int, int]] = {}
        for number, doc in enumerate(self.docs):
            for field, text in enumerate(doc.get(field, "") for field in EXACT):
                for level, said in enumerate(_said(text)):
                    found = self.exact.setdefault(said, {})
                    found[number] = min(found.get(number, level * len(EXACT) + field), level * len(EXACT) + field)
        self.toolset_of = [doc.get("toolset", "") for doc in self.docs]
        # The semantic ranking, when the package ships vectors and the extra is installed: anything with
        # `rank(query, limit)` -> document numbers, nearest first (`semantic.Semantic`).
        self.semantic: Any = None
        weights = ", ".join(str(w) for w in WEIGHTS)
        self._query = f"SELECT rowid, bm25(docs, {weights}) FROM docs WHERE docs MATCH ? ORDER BY 2, rowid LIMIT ?"
        self._matching = "SELECT rowid FROM docs WHERE docs MATCH ?"
        self._notes = "SELECT rowid FROM notes WHERE notes MATCH ?"
        self._described = "SELECT rowid FROM notes WHERE notes MATCH ? ORDER BY bm25(notes), rowid LIMIT ?"

    def search(self, query: str, limit: int = 10, within: set[int] | None = None) -> list[dict[str, Any]]:
        """The best `limit` tools for `query` (among the documents numbered `within`, when given), best
        first: [{"name", "title", "operation", "description", "toolset"}, "deprecated" when it is]; an
        empty query lists those `within`, in order.

        A tool whose title, name or description's first sentence is the query comes first, word for
        word before give or take stop words and word endings: nothing below can push it down. The
        others are candidates of bm25 over the query's words and their synonyms (each column
        weighted; each pair of adjacent words searched again as a pair near each other, so a tool
        that says "pull request" beats one that says "pull" and "request" apart), ranked by how many
        of the query's concepts (a word with its synonyms) their name, title, path or intent hold
        (coordination level: measured better than bm25 alone, on user requests and on known items),
        then, for a short query, by whether their path ends in a thing it names (`SHORT`), then by
        whether they do the kind of thing asked (`_unlike`), then by that bm25."""
        with self.lock:
            return self._search(query, limit, within)

    def _search(self, query: str, limit: int, within: set[int] | None) -> list[dict[str, Any]]:
        if limit < 1:
            return []
        exact: dict[int, int] = {}
        for said in _said(query):
            for row, rank in self.exact.get(said, {}).items():
                if (within is None or row in within) and rank < exact.get(row, LEVELS * len(EXACT)):
                    exact[row] = rank
        groups = concepts(query, self.thesaurus)
        if not groups:
            rows = sorted(exact, key=lambda row: (exact[row], row)) or sorted(within or ())
            return [self.result(self.docs[row]) for row in rows[:limit]]
        terms = _any(term for group in groups for term in group)
        expression = " OR ".join([terms, *_nearby(query)])
        candidates = len(self.docs) if within is not None else CANDIDATES
        scored = [
            row for row in self.db.execute(self._query, (expression, candidates)) if within is None or row[0] in within
        ]
        score = dict(scored)
        # The tools holding each concept in the columns that say what a tool is and does. A word no
        # tool holds there is looked for in the descriptions: the best described tools join the
        # candidates, and a description holding it counts as holding it.
        holders = [{rowid for (rowid,) in self.db.execute(self._matching, (_strong(group),))} for group in groups]
        unnamed = [group for group, found in zip(groups, holders, strict=True) if not found]
        if unnamed:
            described = self.db.execute(self._described, (terms, DESCRIBED if within is None else len(self.docs)))
            for (rowid,) in described:
                if rowid not in score and (within is None or rowid in within):
                    score[rowid] = 0.0
            holders += [{rowid for (rowid,) in self.db.execute(self._notes, (_any(group),))} for group in unnamed]
        for row in exact:
            score.setdefault(row, 0.0)
        held = {row: sum(row in found for found in holders) for row in score}
        named = set()
        if len(groups) <= SHORT:
            named = {rowid for (rowid,) in self.db.execute(self._matching, (f"resource : ({terms})",))}
        unlike = self._unlike(query, groups)
        ranked = sorted(
            score,
            key=lambda row: (
                exact.get(row, LEVELS * len(EXACT)),
                -held[row],
                row not in named,
                unlike(self.docs[row]),
                score[row],
                row,
            ),
        )
        if self.semantic is not None:
            best = sum(ranked[0] in found for found in holders[: len(groups)]) / len(groups) if ranked else 0.0
            ranked = self._fused(query, ranked, exact, within, best)
        if within is None:  # within one toolset, there is nothing else to show
            ranked = self._browsable(ranked, limit)
        return [self.result(self.docs[row]) for row in ranked[:limit]]

    def _browsable(self, ranked: list[int], limit: int) -> list[int]:
        """`ranked` with the places after the first KEPT, up to the PAGE-th, given first to tools of
        toolsets the results do not show yet (in their order), then to the rest: when the search
        misses, an agent lists one of the toolsets shown, and ten results of one toolset offer one;
        the first KEPT, the ranking's best, are never moved."""
        head, later, shown = ranked[:KEPT], [], {self.toolset_of[row] for row in ranked[:KEPT]}
        for row in ranked[KEPT:]:
            if len(head) < min(limit, PAGE) and self.toolset_of[row] not in shown:
                head.append(row)
                shown.add(self.toolset_of[row])
            else:
                later.append(row)
        return head + later

    def _fused(
        self, query: str, ranked: list[int], exact: dict[int, int], within: set[int] | None, matched: float
    ) -> list[int]:
        """`ranked` fused with the semantic ranking by reciprocal rank fusion, weighted by how much of the
        query (`matched`, 0 to 1) the best of `ranked` holds; the exact matches still first (nothing can
        push them down); `ranked` as it is while the semantic ranking has nothing."""
        nearest = self.semantic.rank(query, len(self.docs) if within is not None else NEAREST)
        nearest = [row for row in nearest if within is None or row in within][:NEAREST]
        if not nearest:
            return ranked
        fused: dict[int, float] = {}
        for weight, ranking in ((1.0, ranked), (MISSED - (MISSED - MATCHED) * matched, nearest)):
            for position, row in enumerate(ranking, 1):
                fused[row] = fused.get(row, 0.0) + weight / (FUSION + position)
        return sorted(fused, key=lambda row: (exact.get(row, LEVELS * len(EXACT)), -fused[row], row))

    def toolset(self, name: str) -> set[int]:
        """The documents of the toolset `name` and of the toolsets under it (`repos` holds `repos.branches`)."""
        return {number for number, found in enumerate(self.toolset_of) if found == name or found.startswith(name + ".")}

    @staticmethod
    def _unlike(query: str, groups: list[list[str]]) -> Callable[[Mapping[str, str]], int]:
        """How far a tool is from the kind of thing the query asks (the first word of a tool's intent
        is its kind): among tools that hold as many of the query's concepts, one that removes comes
        last unless the query asks to remove; a query that begins with the word of a kind ("create a
        payout", "list invoices") and names no other puts the tools of that kind first; and one that
        writes comes after the reads when the query is a question."""
        removes = any(term in REMOVAL for group in groups for term in group)
        asks = is_question(query)
        said = [word for word in words(query) if word not in STOPWORDS]
        named = {KINDS[word] for word in said if word in KINDS}  # "create or update a file" asks for neither first
        asked = KINDS.get(said[0]) if said and len(named) == 1 else None

        def unlike(doc: Mapping[str, str]) -> int:
            kind = doc["intent"].partition(" ")[0]
            if kind == "delete" and not removes:
                return 2
            if asked is not None:
                return int(kind != asked)
            return int(asks and kind not in ("list", "get"))

        return unlike

    @staticmethod
    def result(doc: Mapping[str, Any]) -> dict[str, Any]:
        """A result line: the tool, its title (with what tells it from tools of the same title), its
        operation, what its description says beyond the title, its toolset, and whether it is deprecated."""
        title = doc["title"] or None
        if title and doc.get("distinct"):
            title = f"{title} ({doc['distinct']})"
        found = {
            "name": doc["tool"],
            "title": title,
            "operation": doc.get("operation", ""),
            "description": doc.get("sentence", ""),
            "toolset": doc.get("toolset", ""),
        }
        if doc.get("deprecated"):
            found["deprecated"] = True
        return found


def is_question(query: str) -> bool:
    """A question ("who follows octocat?", "which sites are down"): what it asks for is read."""
    found = words(query)
    return query.rstrip().endswith("?") or bool(found) and found[0] in QUESTION


def words(text: str) -> list[str]:
    return [word.lower() for word in SEARCH_WORD.findall(text)]


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


@lru_cache(maxsize=1 << 16)  # bounded: a query's words are added too
def _stem(word: str) -> str:
    """`word` without its English ending: the last of its `_forms` (cached: tools share most words)."""
    return _forms(word)[-1]


def _said(text: str) -> list[tuple[str, ...]]:
    """What `text` says, word for word (case and punctuation aside), then without its stop words,
    then without its words' endings too: the keys of an exact match and of two near-exact ones."""
    found = words(text)
    content = [word for word in found if word not in STOPWORDS]
    keys = [("=", *found), ("-", *content), ("~", *map(_stem, content))]
    return [said for said in keys if len(said) > 1]


def _nearby(query: str) -> list[str]:
    """FTS5 expressions for each pair of adjacent words of the query: the pair as a phrase when no
    stop word parts them in the query ("pull request"), and a NEAR group (at most NEAR words apart,
    either order) for every pair; bm25 counts the words again where a column has them so."""
    for pattern, meaning in VALUES:
        query = pattern.sub(f" {meaning} ", query)
    found = words(query)
    pairs: dict[tuple[str, str], bool] = {}
    content = [(position, word) for position, word in enumerate(found) if word not in STOPWORDS]
    for (at, first), (then, second) in zip(content, content[1:], strict=False):
        if first != second:
            pairs[first, second] = pairs.get((first, second), False) or then == at + 1
    phrases = [f'"{a} {b}"' for (a, b), adjacent in pairs.items() if adjacent]
    return [*phrases, *(f'NEAR("{a}" "{b}", {NEAR})' for a, b in pairs)]
