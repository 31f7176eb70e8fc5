"""Spec prose as the plain text an agent reads: a tool's title and first line, a search result.

An OpenAPI description is CommonMark, which lets raw HTML in (payments APIs write every description
as HTML: `<p>Creates a new <code>tax_id</code> object.</p>`). markdown-it-py, the CommonMark parser
already in the toolchain (rich's), renders it to HTML as the spec defines it; the standard library's
HTML parser then reads that HTML's text: block elements end paragraphs, `<br>` ends a line, links and
emphasis keep their words, entities are decoded, `<script>` and `<style>` say nothing. A tag that is
no HTML element (`<owner>/<repo>` in prose) is text, kept as written.
Deterministic (no locale, no network) and bounded: at most MAX_CHARS of a text are read.
"""

from __future__ import annotations

import re
from functools import lru_cache
from html.parser import HTMLParser

from markdown_it import MarkdownIt

MAX_CHARS = 32_000  # a description longer than this is read up to here (its first line is what matters)
_MARKDOWN = MarkdownIt("commonmark")
_BLOCKS = frozenset(
    """address article aside blockquote body caption center dd details dialog div dl dt fieldset figcaption
    figure footer form h1 h2 h3 h4 h5 h6 header hr html li main nav ol p pre section summary table tbody
    td tfoot th thead tr ul""".split()
)
_INLINE = frozenset(
    """a abbr acronym b bdi bdo big cite code data del dfn em font i img ins kbd label mark q rp rt ruby s
    samp small span strike strong sub sup time tt u var wbr""".split()
)
_SILENT = frozenset({"script", "style", "template", "head", "title"})
_SPACE = re.compile(r"\s+")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s")
# What may make text more than plain: markup characters (emphasis, code, links, HTML, entities,
# escapes, tables), a line that may open a block (list, heading underline, quote, indented code)
# and a line break that markup makes hard (two trailing spaces).
_MARKUP = re.compile(r"[<>&*_`\[\]\\!#|~]|^[ \t]*(?:[-+=]|\d+[.)])|^(?: {4}|\t)| {2,}$", re.MULTILINE)
_BLANK_LINE = re.compile(r"\n[ \t]*\n")
_HTML = re.compile(r"<[a-zA-Z/!]|&(?:#\d+|#x[0-9a-fA-F]+|[a-zA-Z]+);")
# What only Markdown writes: a link (`[File](/docs/files)`) or a code span (`` `store` ``). Bounded
# repetitions: an unbounded one rescans the rest of the text from every `[` (quadratic in it).
_MARKDOWN_ONLY = re.compile(r"\[[^\]\n]{1,200}\]\([^)\s]{1,500}\)|`[^`\n]{1,500}`")


class _Text(HTMLParser):
    """The text of an HTML fragment as paragraphs (a list of lines each)."""

    def __init__(self, quotes: bool) -> None:
        super().__init__(convert_charrefs=True)
        self.quotes = quotes  # False: the text of <blockquote> (notes set apart) is left out
        self.paragraphs: list[list[str]] = [[""]]
        self.silent = 0
        self.quoted = 0

    def _break(self, line: bool = False) -> None:
        if line:
            self.paragraphs[-1].append("")
        elif self.paragraphs[-1] != [""]:
            self.paragraphs.append([""])

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _SILENT:
            self.silent += 1
        elif tag == "blockquote":
            self.quoted += 1
        if tag == "br":
            self._break(line=True)
        elif tag in _BLOCKS:
            self._break()
        elif tag not in _INLINE and tag not in _SILENT:
            self.handle_data(self.get_starttag_text() or "")  # not an HTML element: prose that looks like a tag

    def handle_endtag(self, tag: str) -> None:
        if tag in _SILENT:
            self.silent = max(0, self.silent - 1)
        elif tag == "blockquote":
            self.quoted = max(0, self.quoted - 1)
        if tag in _BLOCKS:
            self._break()
        elif tag not in _INLINE and tag not in _SILENT and tag != "br":
            self.handle_data(f"</{tag}>")

    def handle_data(self, data: str) -> None:
        if not self.silent and (self.quotes or not self.quoted):
            self.paragraphs[-1][-1] += data

    def text(self) -> list[str]:
        found = []
        for lines in self.paragraphs:
            kept = [line for line in (_SPACE.sub(" ", line).strip() for line in lines) if line]
            if kept:
                found.append("\n".join(kept))
        return found


def paragraphs(text: str | None, *, quotes: bool = True) -> list[str]:
    """The paragraphs of `text` (CommonMark with HTML) as plain text, each with its lines; with
    `quotes=False`, without the block quotes (the notes a description sets apart)."""
    if not text or not text.strip():
        return []
    return list(_read(text[:MAX_CHARS], quotes))


@lru_cache(maxsize=4096)
def _read(text: str, quotes: bool) -> tuple[str, ...]:
    """Cached: a description is read for its title, its first line and its search document. Text
    with no character or line start that CommonMark or HTML gives a meaning to (most summaries)
    reads as itself, paragraph by paragraph, without the parsers: the same result, sooner."""
    if not _MARKUP.search(text):
        return tuple(" ".join(part.split()) for part in _BLANK_LINE.split(text) if part.strip())
    reader = _Text(quotes)
    reader.feed(_MARKDOWN.render(text))
    reader.close()
    return tuple(reader.text())


def _first(text: str | None, quotes: bool = True) -> str:
    """The first paragraph of `text`, read a block at a time (a blank line ends a CommonMark
    paragraph: the rest of a long description need not be parsed)."""
    for block in (text or "")[:MAX_CHARS].split("\n\n"):
        found = _read(block, quotes) if block.strip() else ()
        if found:
            return found[0]
    return ""


def plain(text: str | None) -> str:
    """`text` as plain text: its paragraphs, separated by a blank line."""
    return "\n\n".join(paragraphs(text))


def one_line(text: str | None) -> str:
    """`text` as plain text on one line."""
    return " ".join(" ".join(paragraphs(text)).split())


def summary_line(text: str | None) -> str:
    """An operation's `summary` on one line. OpenAPI gives a summary no markup (only descriptions are
    CommonMark), so `__init__` or `*` stay as written; HTML that some specs put there is still read,
    and so is Markdown where it writes what only Markdown writes (a link, a code span)."""
    text = (text or "")[:MAX_CHARS]
    if _MARKDOWN_ONLY.search(text):
        return one_line(text)
    if _HTML.search(text):
        reader = _Text(quotes=True)
        reader.feed(text)
        reader.close()
        text = " ".join(reader.text())
    return " ".join(text.split())


def clip(text: str, limit: int) -> str:
    """`text` cut to at most `limit` characters, at a word's end, with an ellipsis when cut."""
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    if " " in cut and not text[limit - 1].isspace():
        cut = cut.rsplit(" ", 1)[0]
    return cut.rstrip(" ,;:") + "\u2026"


def first_paragraph(text: str | None, limit: int = 600, *, quotes: bool = True) -> str:
    """The first paragraph of `text` as plain text on one line, at most `limit` characters."""
    return clip(" ".join(_first(text, quotes).split()), limit)


def first_sentence(text: str | None, limit: int = 160) -> str:
    """The first sentence of `text`'s first paragraph as plain text (a line break ends it too), at
    most `limit` characters."""
    line = _first(text).split("\n", 1)[0]
    return clip(_SENTENCE_END.split(line, maxsplit=1)[0].strip(), limit)


def is_one_sentence(text: str) -> bool:
    """Whether `text`, read as plain text, is one sentence (or less) on one paragraph."""
    found = paragraphs(text)
    return len(found) <= 1 and not _SENTENCE_END.search(" ".join(" ".join(found).split()))


def title_from(description: str | None, limit: int = 100) -> str | None:
    """A title for an operation without a summary: its description's first sentence, without the
    full stop."""
    sentence = first_sentence(description, limit)
    if sentence.endswith(".") and not sentence.endswith(".."):
        sentence = sentence[:-1].rstrip()
    return sentence or None


def with_plain_first_block(text: str) -> str:
    """`text` with its first block (up to the first blank line: the tool's first line) as plain text
    and the rest as the spec wrote it. A description written as HTML on one line is one block."""
    head, blank, rest = text.partition("\n\n")
    converted = plain(head)
    if not converted or converted == head.strip():
        return text
    return f"{converted}{blank}{rest}" if rest.strip() else converted
