"""What a question names that none of the kept passages says: a near miss.

The relevance gate and the answerability check read how well passages fit a question; a
question about something the documents never name still fits the passages about its
neighbour ("When is Celery 6.0 released?" reads the changelog of 5.0; "How do I migrate my
workflows to Temporal?" reads the migration command). Four kinds of such names hold for any
documentation, whatever its subject:

- a version: "6.0", "Requests 3", "version 7", which no passage gives;
- money: a price, a cost, a plan's fee, where no passage speaks of money;
- another product: a capitalised name ("Temporal", "Cloudflare", "KEDA") no passage names;
- the asker's own account, or an action on it ("reset my password", "escalate it for me"),
  where no passage speaks of accounts or passwords.

And a question about what will come (a release date, a roadmap) is never answered from a
changelog, which tells only what came. Each finding is a reason a person can read."""

from __future__ import annotations

import re
from collections.abc import Sequence

from assistant.rag.types import Candidate

_VERSION_DOTTED = re.compile(r"(?<![\w.])v?(\d+\.\d+(?:\.\d+)?)(?![\w.]*\d)")
#: "Celery 6", "Requests 3", "version 7", "v4": a name or the word version, then a number.
_VERSION_NAMED = re.compile(r"\b(version|release|v|[A-Z][a-zA-Z]+)\s?(\d{1,2})(?![\w.%:/,-])")
_NOT_VERSIONED = re.compile(
    r"^(step|steps|page|pages|chapter|part|item|items|line|lines|option|plan|tier|level|top|"
    r"day|days|hour|hours|minute|minutes|second|seconds|week|weeks|month|months|year|years|"
    r"node|nodes|worker|workers|task|tasks|time|times|gb|mb|kb|tb|http|the|a|an|of|in|on|at|"
    r"for|with|to|by|from|than|every|each|about|after|before|over|under|up|only|just|all|"
    r"python|windows|ios|android)$",
    re.IGNORECASE,
)
_MONEY = re.compile(
    r"\b(price|prices|pricing|priced|cost|costs|costing|cheap|cheaper|cheapest|expensive|"
    r"fee|fees|paid|pay|billing|billed|subscription|invoice|refund|discount)\b|[$€£¥]",
    re.IGNORECASE,
)
_PASSAGE_MONEY = re.compile(
    r"\b(price|prices|pricing|cost|costs|fee|fees|paid|pay|payment|billing|billed|"
    r"subscription|invoice|refund|discount|charge|charged|free|plan|plans|per month|per year|"
    r"license|licence)\b|[$€£¥]",
    re.IGNORECASE,
)
_ACCOUNT = re.compile(
    r"\b(my|our)\s+(\w+\s+){0,2}(account|password|login|credentials)\b|"
    r"\b(can|could|will|would) you (please )?"
    r"(reset|escalate|delete|refund|cancel|unlock|change|update|close|reopen|contact|email|"
    r"call|fix)\b",
    re.IGNORECASE,
)
_PASSAGE_ACCOUNT = re.compile(
    r"\b(account|accounts|password|passwords|sign in|log in|login|profile|subscription)\b",
    re.IGNORECASE,
)
_FUTURE = re.compile(
    r"\b(will be released|be released|release date|released when|when will|going to|upcoming|"
    r"next(?: [\w-]+){0,3} (release|version)s?|(release|version)s? (is |are )?scheduled|"
    r"roadmap|planned|is due|be due|future)\b",
    re.IGNORECASE,
)
#: A question about a version itself (when it comes, what it changes, whether to move to it),
#: not one that names the version of something the asker uses ("deploy stable diffusion 2.1").
_ABOUT_VERSIONS = re.compile(
    r"\b(version|versions|release|released|releases|upgrade|upgrading|migrate|support|"
    r"supports|supported|drop|drops|deprecat\w*|new in|changed?|differ\w*)\b",
    re.IGNORECASE,
)
_CAPITALISED = re.compile(r"(?<![\w.`/'-])([A-Z][a-zA-Z0-9]*(?:[ ][A-Z][a-zA-Z0-9]*)*)(?![\w`/(-])")
#: Capitalised words that name no product: how a question is asked, days and months, and the
#: generic terms of computing and of payment and sign-in (an IBAN, a PIN, a one-time code) that
#: documentation and visitors write in capitals.
_COMMON = frozenset(
    """i i'm i've i'd a an the my our your we you he she it they this that these those what
    when where which who whom whose why how is are was were do does did can could should would
    will shall may might must have has had be been being if in on at by for from with about
    into over under and or but not no yes so then than also just only please thanks hi hello
    hey ok okay is there any some all each every one two three first second last next new old
    monday tuesday wednesday thursday friday saturday sunday january february march april may
    june july august september october november december api apis http https url urls uri
    json xml html css js sql cli sdk ui ux os id ids uuid utc gmt tls ssl dns tcp udp ip cpu
    gpu ram io pdf csv yaml toml ini env rest get post put patch delete head options crud
    readme faq docs doc note warning error errors exception example examples true false none
    null ascii unicode utf utf-8 mime oauth jwt ssh ftp smtp imap www gb mb kb tb ms
    iban bic vat pin otp mfa sso
    """.split()
)


def _normal(text: str) -> str:
    return " ".join(text.lower().split())


def unsaid(question: str, kept: Sequence[Candidate], found: Sequence[Candidate] = ()) -> list[str]:
    """Reasons, in words, why the kept passages cannot answer what the question names ([] when
    nothing it names is missing). Versions, money and accounts are looked for in the kept
    passages; names in everything the search `found` (a name the whole search never met is one
    the documents do not treat, while the documents' own subject, "Celery" on Celery's site,
    may be absent from the one passage that answers)."""
    if not kept:
        return []
    text = _normal(" ".join(f"{c.chunk.title}\n{c.chunk.text}" for c in kept))
    reasons: list[str] = []
    for version in versions(question) if _ABOUT_VERSIONS.search(question) else ():
        if not _mentions_version(text, version):
            reasons.append(f"the passages do not mention version {version}")
    if _MONEY.search(question) and not _PASSAGE_MONEY.search(text):
        reasons.append("the question asks about money, and the passages mention no price")
    if _ACCOUNT.search(question) and not _PASSAGE_ACCOUNT.search(text):
        reasons.append("the question is about the asker's own account; the passages cover none")
    if found:
        searched = _normal(" ".join(f"{c.chunk.title}\n{c.chunk.text}" for c in found)) + text
        for name in names(question):
            if not re.search(rf"(?<![a-z0-9]){re.escape(name.lower())}", searched):
                reasons.append(f"the documents found do not mention {name}")
    if _FUTURE.search(question) and all(c.chunk.kind == "changelog" for c in kept[:1]):
        reasons.append("the question asks about what is to come; a changelog tells what came")
    return reasons


def versions(question: str) -> list[str]:
    """The versions a question names: "6.0", and the number of "Requests 3" or "version 7"."""
    found = [m.group(1) for m in _VERSION_DOTTED.finditer(question)]
    for match in _VERSION_NAMED.finditer(question):
        word, number = match.group(1), match.group(2)
        if _NOT_VERSIONED.match(word) or word.lower() in _COMMON:
            continue
        if any(f.split(".")[0] == number for f in found):
            continue
        found.append(number if word.lower() in ("version", "release", "v") else f"{word} {number}")
    return list(dict.fromkeys(found))


def _mentions_version(text: str, version: str) -> bool:
    if " " in version:  # "Requests 3": the name with that number, or "3.x" anywhere
        name, number = version.rsplit(" ", 1)
        pattern = rf"\b{re.escape(name.lower())}\s+v?{number}(?!\d)|(?<![\d.]){number}\.\d"
        return re.search(pattern, text) is not None
    return re.search(rf"(?<![\d.]){re.escape(version)}(?!\d)", text) is not None


_PLAIN_NAME = re.compile(r"^(?:[A-Z][a-z]{2,}|[A-Z]{2,6})$")


def names(question: str) -> list[str]:
    """Names in the question (a capitalised word, an acronym), but for a sentence's first word
    and common terms: the products, services and places it is about. Identifiers the asker
    copies from an error or from code (ConnectionError, Content-Type, X-Api-Key) are no names
    of products: documentation may answer without repeating them."""
    found: list[str] = []
    for sentence in re.split(r"(?<=[.?!])\s+|\n+", question.strip()):
        for match in _CAPITALISED.finditer(sentence):
            name = match.group(1)
            words = name.split()
            if match.start() == 0 or sentence[: match.start()].strip() in ('"', "'", "("):
                words = words[1:]  # a sentence's first word is capitalised anyway
            found += [
                w for w in words
                if _PLAIN_NAME.match(w) and w.lower() not in _COMMON
                and w.lower().removesuffix("s") not in _COMMON
            ]  # fmt: skip
    return list(dict.fromkeys(found))
