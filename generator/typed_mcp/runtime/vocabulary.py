"""The words discovery mode's search knows whatever the API: English stop words, a thesaurus of REST API
vocabulary (what users say -> what APIs name it), phrases that mean one word, the values a query may
hold, the words of a request to remove and the first words of a question. API-neutral: the names of
one product's things come from its own spec (generator/typed_mcp/render/vocabulary.py, `search.json`).
The engine that uses them is `search.py`.
"""

from __future__ import annotations

import re

from .contracts import REMOVAL_WORDS

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
# A thesaurus of REST API vocabulary, API-neutral: query word -> the words APIs use for it (added to
# the query, so bm25 still ranks). Users say "show", "new", "remove", "org", "cert"; operation names
# and summaries say "list", "create", "delete", "organization", "certificate". A word in REPLACED is
# only searched as its synonyms ("logged in" is not about logs).
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
    "search": "find lookup query where locate",
    "upload": "attach",
    "download": "fetch export",
    "transfer": "move hand",
    "compare": "diff difference changed between",
    "review": "approve reject lgtm",
    "comment": "reply respond note remark discuss discussion",
    "rollback": "revert undo restore",
    "run": "execute exec invoke ran running",
    "latest": "newest last current",
    "limit": "quota remaining left",
    # who and what it is done to
    "authenticated": "logged signed whoami me myself",
    # "me" is the caller (the authenticated user), never a users resource: in "give me what it says",
    # an API whose users are the people an admin manages is not what is asked.
    "user": "logged signed whoami account profile person people",
    "organization": "org orgs company",
    "org": "organization organizations",
    "certificate": "cert certs ssl tls https",
    "credentials": "creds password passwords",
    "token": "creds credentials",
    "key": "keys secret",
    "configuration": "config settings options",
    "settings": "config configuration preferences options",
    "invitation": "invite invites invited",
    "label": "tag",
    "member": "people person employee employees teammate colleague staff offboard onboard seat seats",
    "statistics": "stats analytics metrics usage",
    "logs": "log history output console stdout stderr trace",
    "audit": "history",
    "schedule": "cron recurring periodically every hourly daily weekly nightly",
    "archive": "download zip tarball",
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
    "health": "ping uptime healthz",
    # more actions, and the things most APIs have, as users say them (the names of one product's
    # things are that API's own vocabulary, in its search.json: generator/typed_mcp/render/vocabulary.py)
    "lock": "freeze",
    "unlock": "unfreeze",
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
REMOVAL = frozenset(REMOVAL_WORDS)
# The first word of a request that names the kind of tool it asks for (the first word of the tools'
# intent, `render/search.py`): only the words that say nothing else ("make" also forks, "add" also
# joins a member, "get" also lists: "get issues for a repository"); a removal's words are REMOVAL's.
KINDS = {
    **dict.fromkeys(("create", "creates"), "create"),
    **dict.fromkeys(("list", "lists"), "list"),
    **dict.fromkeys(("update", "updates"), "update"),
    **dict.fromkeys(("delete", "deletes"), "delete"),
}
QUESTION = frozenset(
    "who whom whose what which when where why how is are am was were do does did can could has have had".split()
)
REPLACED = frozenset({"logged", "signed", "whoami", "me", "myself", "pr", "prs"})
