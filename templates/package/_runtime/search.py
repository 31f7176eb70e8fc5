"""Full-text search over the package's tools: SQLite FTS5 ranked with bm25.

The documents (`search.json`) are written when the package is generated: per tool, its name's words,
title, tags, path words, parameter names, description and a short description for the results.
The index is built in memory from them when a discovery-mode server starts (about 50 ms for a
thousand tools), not shipped as an SQLite file: a database file's bytes depend on the SQLite library
of the machine that generated it, and the package is compared byte for byte.
"""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

FORMAT = "typed-mcp-search/1"
COLUMNS = ("name", "title", "tags", "path", "params", "description")  # indexed, in this order
# bm25 weight of each column: a word of the tool's name or title says more than one of its description.
WEIGHTS = (8.0, 4.0, 2.0, 3.0, 1.0, 1.0)
_WORD = re.compile(r"[^\W_]+")  # letters and digits: `pull_number` and `/repos/{owner}` split into words
# Words that say nothing about which tool: left out of a query (unless the query has nothing else).
STOPWORDS = frozenset(
    "a an and any are as at be by can do does for from get give how i if in is it its me my of on or "
    "please show some that the their there these this to tool tools use using want what when which "
    "with you your".split()
)


class SearchUnavailable(RuntimeError):
    pass


def load_documents(path: Path) -> list[dict[str, str]]:
    data = json.loads(path.read_bytes())
    if data.get("format") != FORMAT:
        raise SearchUnavailable(f"{path.name}: not a {FORMAT} file (regenerate the package)")
    return data["tools"]


class SearchIndex:
    """An in-memory FTS5 index of `documents` (those named in `only`, when given)."""

    def __init__(self, documents: Iterable[Mapping[str, str]], only: set[str] | None = None) -> None:
        self.db = sqlite3.connect(":memory:", check_same_thread=False)
        try:
            self.db.execute(
                f"CREATE VIRTUAL TABLE docs USING fts5({', '.join(COLUMNS)}, tokenize='porter unicode61')"
            )
        except sqlite3.OperationalError as exc:  # an SQLite built without FTS5
            raise SearchUnavailable(f"discovery mode needs SQLite with FTS5: {exc}") from None
        self.docs = [doc for doc in documents if only is None or doc["tool"] in only]
        self.db.executemany(
            f"INSERT INTO docs (rowid, {', '.join(COLUMNS)}) VALUES (?, {', '.join('?' for _ in COLUMNS)})",
            [(number, *(doc[column] for column in COLUMNS)) for number, doc in enumerate(self.docs)],
        )
        self.db.commit()
        weights = ", ".join(str(w) for w in WEIGHTS)
        self._query = f"SELECT rowid FROM docs WHERE docs MATCH ? ORDER BY bm25(docs, {weights}), rowid LIMIT ?"

    def search(self, query: str, limit: int = 10) -> list[dict[str, Any]]:
        """The best `limit` tools for `query`, best first: [{"name", "title", "description"}]."""
        expression = match_expression(query)
        if expression is None or limit < 1:
            return []
        rows = self.db.execute(self._query, (expression, limit)).fetchall()
        return [self.result(self.docs[row[0]]) for row in rows]

    @staticmethod
    def result(doc: Mapping[str, str]) -> dict[str, Any]:
        return {"name": doc["tool"], "title": doc["title"] or None, "description": doc["summary"]}


def words(text: str) -> list[str]:
    return [word.lower() for word in _WORD.findall(text)]


def match_expression(query: str) -> str | None:
    """An FTS5 query: any of the query's words (each quoted, so nothing in it is FTS5 syntax),
    without the stop words when other words remain."""
    tokens = list(dict.fromkeys(words(query)))
    terms = [token for token in tokens if token not in STOPWORDS] or tokens
    return " OR ".join(f'"{term}"' for term in terms) if terms else None
