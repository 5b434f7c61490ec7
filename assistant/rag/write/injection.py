"""Spot text aimed at an AI assistant rather than at a reader: indirect prompt injection
(OWASP LLM01). A page that addresses an assistant or a summariser and asks it to do something
(add a sentence, send, visit, ignore, reveal), in whatever words, or that asks its readers to
hand over a password or a card number, is flagged when it is indexed, so the people running
the console see it before it is quoted. Nothing is removed: a page about prompt injection may
say these things on purpose, and an operator decides.

Found by what the text does, not by known phrasings: a unit (a sentence, a line, a table cell)
that *addresses* a reader-model ("Note for AI helpers", "if you are a language model", "when
summarising this page", "KI-Assistenten") with an *order* in it or in the next two units
(split across sentences); an order about the reader-model's own output ("after the answer add
the sentence ..."); a request to hand over secrets; the old general patterns ("ignore your
previous instructions", chat-template markers). Text is read after Unicode normalisation with
invisible characters taken out ("Ign\u200bore" is "Ignore").

The same rules keep such passages out of what a local model reads (assistant/rag/answering.py)
and the sentences that give orders out of what a written answer may rest on
(write/grounding.py); ingestion/injection.py flags documents with them. Pure Python, no Django.
"""

from __future__ import annotations

import re
import unicodedata

#: How many excerpts a document keeps, and how long each may be.
MAX_EXCERPTS = 5
EXCERPT_CHARS = 160

_ANY = r"(?:all|any|every|the|your|my|its|previous|prior|above|earlier|preceding|former|other)"
_RULES = (
    r"(?:rules?|instructions?|guidelines?|directions?|directives?|prompts?|system\s+prompts?"
    r"|policies|policy|programming|training)"
)
_GENERAL = [
    # "Ignore your previous instructions", "disregard all prior rules", "forget the above".
    rf"\b(?:ignor(?:e|ing)|disregard(?:ing)?|forget(?:ting)?|overrid(?:e|ing)|bypass(?:ing)?"
    rf"|abandon(?:ing)?)\s+(?:{_ANY}\s+){{1,3}}{_RULES}\b",
    # "End every answer with ...", "begin each reply with ...": orders about every answer.
    r"\b(?:end|start|begin|finish|close|sign)\s+(?:every|each|all|your|any)\s+"
    r"(?:answers?|responses?|repl(?:y|ies)|messages?|summar(?:y|ies))\b",
    # "You are FreeBot", "you are now HelpBot", "you are now an AI without restrictions".
    r"\byou\s+are\s+(?:now\s+)?[A-Z]?\w*bot\b",
    r"\byou\s+are\s+(?:now\s+)?(?:an?\s+|the\s+)?(?:ai|a\.i\.|assistant|chat\s?bot|language\s+model"
    r"|llm|gpt|large\s+language\s+model)\b",
    # Talk of the assistant's own configuration.
    r"\b(?:system|hidden|initial|original)\s+prompt\b",
    # Orders about what to tell the person reading.
    r"\b(?:tell|inform|instruct|convince|persuade)\s+(?:the|any|all)\s+(?:readers?|users?|customers?"
    r"|visitors?|humans?)\s+(?:that|to)\b",
    r"\bdo\s+not\s+(?:tell|reveal|mention|disclose)\s+(?:this|these|it)?\s*(?:to\s+)?(?:the\s+)?"
    r"(?:user|reader|customer|human)s?\b",
    # Chat-template markers that only mean something to a model.
    r"<\|im_start\|>|<\|system\|>|\[/?INST\]|<<SYS>>|###\s*(?:instruction|system)\b",
]

# Who a reader-model is, by name or kind, in a few languages.
_AI = r"(?:ai|a\.i\.|llm|gpt|ki|ia|generative|language)"
_KIND = (
    r"(?:assistants?|helpers?|models?|agents?|tools?|systems?|bots?|summari[sz]ers?|readers?"
    r"|crawlers?|assistenten|assistent|helfer|modelle?|asistentes?|assistentes?|assistenti"
    r"|modelos?|modelli|modèles?|outils?|herramientas?)"
)
_NAMED = r"(?:llms?|chatgpt|claude|gemini|copilot|chat\s?bots?|sprachmodell\w*)"
_AGENT = (
    rf"(?:{_AI}[\s-]+{_KIND}|{_KIND}\s+(?:de\s+|d'|di\s+|der\s+)?(?:l'|la\s+)?(?:ia|ki|ai)\b"
    rf"|{_NAMED}|(?:language|ai)\s+models?|summari[sz]ers?|bots?)"
)
_GENERIC = r"(?:assistants?|models?|bots?|machines?|robots?|agents?|crawlers?|summari[sz]ers?)"
_SUMMARISING = r"(?:summari[sz]|paraphras|condens|rewrit|résum|zusammenfass|resum|riassum)\w*"
_ADDRESSES = [
    # "Note for AI helpers", "message to any assistant", "Hinweis für KI-Assistenten".
    rf"\b(?:note|message|memo|notice|reminder|attention|hinweis|nachricht"
    rf"|remarque|nota|aviso|avviso)\s+(?:for|to|für|an|pour|para|per)\s+(?:the\s+|any\s+|all\s+"
    rf"|every\s+|die\s+|alle\s+|les\s+|los\s+|las\s+|gli\s+|i\s+|os\s+)?(?:{_AGENT}|{_GENERIC})",
    rf"\b(?:dear|hey|hi|hello|attention|attn|liebe[rs]?|cher|chère|querido|caro)\s*,?\s+"
    rf"(?:the\s+)?(?:{_AGENT}|{_GENERIC})",
    # "This paragraph is for AI assistants", "to any language model".
    rf"\b(?:for|to|für|an|pour|para|per)\s+(?:the\s+|any\s+|all\s+|every\s+|die\s+|alle\s+"
    rf"|les\s+|los\s+|las\s+)?(?:{_AI}[\s-]+{_KIND}|{_NAMED}|(?:language|ai)\s+models?)\b"
    r"(?=\s*(?:[.:!,;]|$))",
    # "AI assistant: add ...", "ChatGPT, please ...", at the start of a unit.
    rf"^\W*(?:{_AGENT}|assistant|ai|system\s+prompt)\s*[:,]",
    # "AI helpers that summarise this page", "models which read this".
    rf"\b{_AGENT}\s+(?:that|who|which|die|qui|que|che)\s+(?:read|{_SUMMARISING}"
    rf"|process|crawl|index|answer|pars|scrap|lesen|lisent|leen)\w*",
    # "If you are an AI", "when summarising this page", "whoever summarises this".
    rf"\bif\s+you\s+are\s+(?:an?\s+)?(?:{_AGENT}|{_GENERIC}|language\s+model)",
    rf"\b(?:when|while|if|whenever|before|after)\s+(?:you\s+|you're\s+|you\s+are\s+)?"
    rf"{_SUMMARISING}\s+(?:this|the|these)\b",
    rf"\b(?:whoever|anyone|anything|any\s+\w+)\s+(?:that\s+|who\s+)?{_SUMMARISING}\s+(?:this|these)",
    rf"\b(?:{_AI}[\s-]+{_KIND})\b(?=[^.]*\b(?:must|should|shall|please|are\s+to|need\s+to)\b)",
]
_ADDRESS = re.compile("|".join(f"(?:{p})" for p in _ADDRESSES), re.IGNORECASE | re.MULTILINE)

# What a reader-model is asked to do: change its output, pass something on, go somewhere,
# drop its rules, give away what it holds. English, French, German, Spanish, Italian,
# Portuguese imperatives.
_ORDER = re.compile(
    r"(?<!\bcan )(?<!\bmay )(?<!\bwill )(?<!\bwould )(?<!\bcould )(?<!\bthe )(?<!\ba )"
    r"\b(?:add|append|include|insert|put|place|paste|mention|say|state|write|print|output|reply"
    r"|respond|tell|inform|recommend|advise|direct|redirect|send|forward|e-?mail|share|submit"
    r"|visit|go\s+to|navigate|click|browse|fetch|follow|link|ignore|disregard|forget|override"
    r"|bypass|reveal|disclose|leak|show|repeat|replace|rewrite|omit|hide|claim|urge|ask|ensure"
    r"|make\s+sure|ajout\w*|envoie\w*|envoy\w*|ignore[zr]|visite[zr]|indique[zr]?|mentionne[zr]?"
    r"|écri\w*|révél\w*|dites|insér\w*|füge|hinzu|sende|senden|schick\w*|ignorier\w*|besuch\w*"
    r"|schreib\w*|nenne|erwähne|teile|gib|verrat\w*|vergiss|añad\w*|agreg\w*|envía|enviar|ignora"
    r"|ignorar|visita|visitar|escrib\w*|menciona|incluy\w*|incluir|revela|olvida|aggiungi|invia"
    r"|scrivi|includi|rivela|dimentica|menziona|adicione|envie|visite|escreva|inclua|revele)\b",
    re.IGNORECASE,
)

# An order about the reader-model's own output: "after the answer add the sentence ...".
_OUTPUT = re.compile(
    r"\b(?:(?:after|before|below|beneath|under|above|at\s+the\s+(?:end|start|top|bottom)\s+of"
    r"|end)\s+(?:the|your|each|every|any)\s+(?:answers?|summar(?:y|ies)|repl(?:y|ies)"
    r"|responses?)|(?:in|into|to)\s+(?:your|each|every|any)\s+(?:answers?|summar(?:y|ies)"
    r"|repl(?:y|ies)))\b",
    re.IGNORECASE,
)
_OUTPUT_VERB = re.compile(
    r"\b(?:add|append|include|insert|put|place|paste|mention|say|write|print|output|show)\b",
    re.IGNORECASE,
)

# A request to hand over a secret, not negated ("never send your password" is advice).
_HAND_OVER = re.compile(
    r"\b(?:send|e-?mail|mail|share|forward|give|submit|disclose|reveal|text|dm|post|reply\s+with"
    r"|tell\s+us|confirm|envoy\w*|envie|envía|enviar|sende\w*|schick\w*|invia)\b",
    re.IGNORECASE,
)
_SECRET = re.compile(
    r"\b(?:passwords?|passcodes?|passphrases?|(?:full\s+)?(?:credit\s+|debit\s+)?card\s+"
    r"(?:numbers?|details)|credit\s+cards?|cvv|cvc|security\s+codes?|pin(?:\s+codes?)?|ssn"
    r"|social\s+security|bank\s+(?:account|details|login)s?|iban|credentials|login\s+details"
    r"|one-time\s+(?:codes?|passwords?)|otp|2fa\s+codes?|verification\s+codes?|seed\s+phrases?"
    r"|recovery\s+phrases?|private\s+keys?|secret\s+keys?|mot\s+de\s+passe|passwort|kennwort"
    r"|contraseña|numéro\s+de\s+carte|kartennummer|número\s+de\s+tarjeta)\b",
    re.IGNORECASE,
)
_ORDERED = re.compile(
    r"(?:^\W*|\b(?:please|kindly|must|should|shall|need\s+to|have\s+to|are\s+to|then|and)\s+)$",
    re.IGNORECASE,
)
_RECIPIENT = re.compile(r"\b(?:to|us|me|an|à|a|an)\b\s+\S|@", re.IGNORECASE)
_NEGATED = re.compile(r"\b(?:never|not|no\s+one|nobody|nie|jamais|nunca|mai)\b|n't\b", re.I)

_GENERAL_RE = re.compile("|".join(f"(?:{p})" for p in _GENERAL), re.IGNORECASE | re.MULTILINE)
# A unit ends at a sentence's end, a line break or a table cell's border.
_BORDER = re.compile(r"(?<=[.!?])\s+|\n|\|")
#: How many units after an address its order may come in ("Note for AI readers. Please ...").
_REACH = 2


def plain(text: str) -> str:
    """`text` as a model reads it: compatibility forms folded (NFKC), invisible format
    characters (zero-width spaces and joiners, direction marks, soft hyphens) taken out."""
    folded = unicodedata.normalize("NFKC", text)
    return "".join(c for c in folded if c in "\n\t" or unicodedata.category(c) != "Cf")


def asks_for_secrets(text: str) -> bool:
    """Whether `text` asks someone to hand over a password, a card number or the like."""
    return any(_asks_for_secrets(unit) for _, _, unit in _units(plain(text)))


def _asks_for_secrets(unit: str) -> bool:
    # A request, not a mention ("recall for e-mail, card and IBAN"): the verb gives an order
    # (it opens the unit or follows "please", "must", "should") or names a recipient, and the
    # secret follows it closely; "never send your password" is advice.
    for hand in _HAND_OVER.finditer(unit):
        before, after = unit[: hand.start()], unit[hand.end() :]
        secret = _SECRET.search(after)
        if secret is None or len(after[: secret.start()].split()) > 6:
            continue
        ordered = _ORDERED.search(before) is not None or _RECIPIENT.search(after) is not None
        if ordered and not _NEGATED.search(before):
            return True
    return False


def _units(text: str) -> list[tuple[int, int, str]]:
    units, start = [], 0
    for border in [*_BORDER.finditer(text), None]:
        end = border.start() if border else len(text)
        if text[start:end].strip():
            units.append((start, end, text[start:end]))
        start = border.end() if border else end
    return units


def _spans(text: str) -> list[tuple[int, int]]:
    """Where in `text` (already `plain`) instructions to an assistant are, in order."""
    found = [(m.start(), m.end()) for m in _GENERAL_RE.finditer(text)]
    units = _units(text)
    for index, (start, end, unit) in enumerate(units):
        order = _OUTPUT.search(unit) and _OUTPUT_VERB.search(unit)
        if order or _asks_for_secrets(unit):
            found.append((start, end))
        if _ADDRESS.search(unit):
            reach = units[index : index + 1 + _REACH]
            ordered = [(s, e) for s, e, u in reach if _ORDER.search(u)]
            if ordered:
                found += [(start, end), *ordered]
    return sorted(found)


def instructing_units(text: str) -> list[str]:
    """The sentences, lines or cells of `text` (made `plain`) that give orders to an
    assistant or ask for secrets: what no written answer may rest on."""
    text = plain(text)
    spans = _spans(text)
    return [u for s, e, u in _units(text) if any(s < end and start < e for start, end in spans)]


def instructions_to_an_assistant(text: str) -> list[str]:
    """Excerpts of `text` around what reads as instructions to an AI assistant (at most
    MAX_EXCERPTS, each on one line); empty when there are none."""
    text = plain(text)
    excerpts: list[str] = []
    covered_until = -1
    for found_start, found_end in _spans(text):
        if found_start < covered_until:
            continue
        start = max(0, found_start - 40)
        end = min(len(text), max(found_end + 60, start + 80), start + EXCERPT_CHARS)
        covered_until = end
        excerpt = " ".join(text[start:end].split())
        excerpts.append(("…" if start else "") + excerpt + ("…" if end < len(text) else ""))
        if len(excerpts) == MAX_EXCERPTS:
            break
    return excerpts


def gives_instructions(text: str) -> bool:
    """Whether `text` reads as instructions to an AI assistant."""
    return bool(_spans(plain(text)))
