"""The vocabulary of one API for its search (`search.json`'s "vocabulary": an API word -> the words
users say for it), so that the runtime every package ships holds only words that mean the same in
any API (REST verbs, common English: `_runtime/vocabulary.py`).

Three sources, all read from the spec:

- the abbreviations the spec defines, "Single Sign-On (SSO)" and "pull request (PR)": a long form
  whose words' initials spell the letters in parentheses (Schwartz and Hearst's rule), both ways;
- the words its names clip and its prose writes out (`repo` and "repository", `config` and
  "configuration"), both ways, so that a request's words find a tool whose name or path says the
  short form where its title does not (`repos/create-fork`, titled "Create a fork", for "fork a
  repository"): `clippings`;
- the names of things in common APIs as users say them ("snippet" for a gist, "bucket" for R2,
  "attendees" for participants): an entry ships only in a package whose tools name the thing (in a
  tool's name, title, path or tags), so a weather API's package holds none of GitHub's words.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from typed_mcp import names
from typed_mcp.plan import prose
from typed_mcp.plan.ir import ApiPlan
from typed_mcp.runtime.contracts import SEARCH_WORD

# The things products name, as users say them: the API's word -> what users say.
THINGS: dict[str, str] = {
    # code hosting
    "pull": "pr prs merge request",
    "repository": "repo repos project",
    "repositories": "repo repos projects",
    "issue": "ticket tickets bug bugs",
    "merge": "squash land",
    "merge_request": "mr mrs",
    "commit": "commits sha change changes",
    "branch": "branches",
    "fork": "clone copy duplicate",
    "star": "bookmark favorite favourite like",
    "redeliver": "resend redeliver",
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
    "service": "bot robot",
    # continuous integration and delivery
    "workflow": "pipeline pipelines ci automation",
    "pipeline": "ci build builds workflow",
    "job": "step build",
    "runner": "agent machine worker",
    "artifact": "artifacts binary binaries output",
    "deployment": "deploy rollout",
    "release": "ship version",
    # networks, domains and the edge
    "zone": "domain domains site sites",
    "dns": "nameserver nameservers resolver",
    "firewall": "block blocking ban deny allowlist blocklist",
    "balancer": "spread distribute failover",
    "load balancer": "failover",
    "rate limit": "throttle throttling",
    "cache": "cdn cached",
    "purge": "flush invalidate",
    "worker": "function functions serverless edge",
    "r2": "bucket buckets object storage s3",
    "kv": "key value store",
    "d1": "sql sqlite",
    "tunnel": "expose cloudflared",
    "access": "sso login zero trust",
    "waf": "attack attacks exploit",
    # meetings and messaging
    "participant": "attendee attendees joined",
    "registrant": "signup signups registration registrations registered",
    "meeting": "call calls conference standup sync",
    "webinar": "seminar broadcast townhall",
    "recording": "recorded recordings video transcript",
    "channel": "room",
    "phone": "dial call calls",
    # payments
    "payment": "pay paid charge",
    "refund": "reimburse",
    "customer": "client buyer",
}
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
# "Single Sign-On (SSO)": up to ten words before an abbreviation of 2 to 8 letters or digits. Each
# word starts a word and is at most 40 characters long: an unbounded one rescans a long word from
# each of its letters (a title of one 32,000-letter word and a "(" took 10 s).
_DEFINED = re.compile(
    r"(?<![\w'-])((?:[^\W\d_][\w'-]{0,40}\s+){0,9}[^\W\d_][\w'-]{0,40})\s*\(([A-Za-z][A-Za-z0-9]{1,7})s?\)"
)


def _words(text: str) -> list[str]:
    return [word.lower() for word in SEARCH_WORD.findall(_CAMEL.sub(" ", text))]


def _stem(word: str) -> str:
    return word[:-1] if len(word) > 3 and word.endswith("s") else word


def abbreviations(texts: Iterable[str]) -> dict[str, set[str]]:
    """Long form -> the abbreviations `texts` define for it ("single sign on" -> {"sso"})."""
    found: dict[str, set[str]] = {}
    for text in texts:
        if "(" not in text:  # the pattern's scan tries every word of a text: most have no definition
            continue
        for match in _DEFINED.finditer(text):
            letters = match[2].lower()
            words = _words(match[1])
            long_form = _long_form(words, letters)
            if long_form:
                found.setdefault(" ".join(long_form), set()).add(letters)
    return found


def _long_form(words: list[str], letters: str) -> list[str] | None:
    """The last words of `words` whose initials spell `letters` (a word may give two letters when it
    starts with them, as "OAuth" or "WebHook"), or None."""
    for start in range(len(words) - 1, -1, -1):
        candidate = words[start:]
        if _spells(candidate, letters):
            return candidate
        if len(candidate) > len(letters):
            return None
    return None


def _spells(words: list[str], letters: str) -> bool:
    if not words:
        return not letters
    if not letters:
        return False
    word = words[0]
    return any(
        word.startswith(letters[:taken]) and _spells(words[1:], letters[taken:])
        for taken in range(1, min(len(word), len(letters)) + 1)
        if len(words) > 1 or taken == len(letters)
    )


# A clipping is a short word of the API's names (3 letters or more) that the titles of at least
# CLIPPED operations write out in full (a word beginning with it) where that operation's name holds it,
# in more operations than the titles write the short word alone (`dns` is a word of its own in most
# titles, not a clipping of "dnssec"); and what the long word adds is no word ending ("member" +
# "ship", "attach" + "ment") and no word the API's titles use (`chat` + "bot", `voice` + "mail").
CLIPPED = 3
_LONGEST_CLIPPED = 12  # the longest short word a clipping may be
_ENDINGS = re.compile(r"(?:ship|ments?|ings?|ed|ged|i?zations?|ations?|ers?|ness|able|ful|less|ly|ity|ive|al)")


def clippings(named: Iterable[tuple[Iterable[str], str]]) -> dict[str, str]:
    """Short word -> the long word it clips, from (the words of an operation's name and literal path,
    its title and description's first sentence) pairs: `repo` -> "repository"."""
    support: dict[str, dict[str, int]] = {}
    alone: dict[str, int] = {}
    said_words: set[str] = set()
    for name_words, text in named:
        said = {names.singular(word) for word in _words(text) if word.isalpha()}
        said_words |= said
        for word in said:
            alone[word] = alone.get(word, 0) + 1
        shorts = {names.singular(word) for word in name_words if len(word) >= 3 and word.isalpha()} - said
        if not shorts:
            continue
        for long in said:  # each word's prefixes, not each pair of words: linear in the spec's text
            for cut in range(3, min(len(long) - 2, _LONGEST_CLIPPED + 1)):
                if long[:cut] in shorts:
                    found = support.setdefault(long[:cut], {})
                    found[long] = found.get(long, 0) + 1
    clipped = {}
    for short, longs in sorted(support.items()):
        long, count = max(longs.items(), key=lambda item: (item[1], item[0]))
        rest = long[len(short) :]
        if count >= CLIPPED and count > alone.get(short, 0) and not _ENDINGS.fullmatch(rest) and rest not in said_words:
            clipped[short] = long
    return clipped


def vocabulary(plan: ApiPlan) -> dict[str, list[str]]:
    """This API's search vocabulary: an API word -> the words users say for it, sorted."""
    named: set[str] = set()
    texts = []
    for op in plan.operations:
        named.update(_stem(w) for w in _words(" ".join([op.tool_name, op.title or "", op.path, *op.tags])))
        texts += [op.title or "", prose.first_paragraph(op.description)]
    texts += [prose.first_paragraph(tag.description) for tag in plan.tags]
    found: dict[str, set[str]] = {}
    literal = [
        (
            _words(" ".join([op.tool_name, *(part for part in op.path.split("/") if "{" not in part)])),
            " ".join([op.title or "", prose.first_sentence(op.description)]),
        )
        for op in plan.operations
    ]
    for clipped, full in clippings(literal).items():
        found.setdefault(clipped, set()).add(full)  # "repository" is searched as `repo` too
        found.setdefault(full, set()).add(clipped)  # and "repo" as "repository"
    for thing, said in THINGS.items():
        if all(_stem(word) in named for word in _words(thing)):
            found.setdefault(thing, set()).update(said.split())
    for long_form, short in abbreviations(texts).items():
        for letters in short:
            if letters not in _words(long_form):
                found.setdefault(long_form, set()).add(letters)  # "sso" is searched as "single sign on"
                found.setdefault(letters, set()).add(long_form)  # and "single sign-on" as "sso"
    return {word: sorted(said) for word, said in sorted(found.items())}
