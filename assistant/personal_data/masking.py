"""Personal data in a visitor's message replaced by typed placeholders: `[email]`, `[phone]`,
`[card]`, `[iban]`, `[secret]`, `[ip]`, and a project's own kinds (custom_patterns).

Plain Python, no model: rules with checksums where the data has one (Luhn for card numbers,
ISO 13616 mod-97 for IBANs, a known card-network prefix), digit counts and separators for
phone numbers, and known key prefixes or a "password:" lead-in for secrets, so that what help
desks see all day and is not personal (versions, order numbers, prices, dates, timestamps,
hashes, ids) stays as written. Microsoft Presidio was considered: its pattern recognisers need
its analyzer engine, which loads a spaCy model; python-stdnum would give the two checksums,
which are a few lines each. Figures on a labelled set: docs/privacy.md.

Kinds run in a fixed order on the text already masked by the ones before (an IBAN's digits are
never read again as a phone number), each a single linear pass of Python's `re`.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

KINDS = ("secret", "email", "iban", "card", "phone", "ip")


def placeholder(kind: str) -> str:
    return f"[{kind}]"


# --- Checksums -------------------------------------------------------------------------------


def luhn_valid(digits: str) -> bool:
    """The Luhn check digit of payment card numbers (ISO/IEC 7812)."""
    total = 0
    for position, char in enumerate(reversed(digits)):
        value = int(char)
        if position % 2:
            value = value * 2 - 9 if value > 4 else value * 2
        total += value
    return total % 10 == 0


#: Lengths of the IBAN of each country that issues them (SWIFT's IBAN registry).
IBAN_LENGTHS = {
    "AD": 24, "AE": 23, "AL": 28, "AT": 20, "AZ": 28, "BA": 20, "BE": 16, "BG": 22, "BH": 22,
    "BR": 29, "BY": 28, "CH": 21, "CR": 22, "CY": 28, "CZ": 24, "DE": 22, "DK": 18, "DO": 28,
    "EE": 20, "EG": 29, "ES": 24, "FI": 18, "FO": 18, "FR": 27, "GB": 22, "GE": 22, "GI": 23,
    "GL": 18, "GR": 27, "GT": 28, "HR": 21, "HU": 28, "IE": 22, "IL": 23, "IQ": 23, "IS": 26,
    "IT": 27, "JO": 30, "KW": 30, "KZ": 20, "LB": 28, "LC": 32, "LI": 21, "LT": 20, "LU": 20,
    "LV": 21, "MC": 27, "MD": 24, "ME": 22, "MK": 19, "MR": 27, "MT": 31, "MU": 30, "NL": 18,
    "NO": 15, "PK": 24, "PL": 28, "PS": 29, "PT": 25, "QA": 29, "RO": 24, "RS": 22, "SA": 24,
    "SC": 31, "SE": 24, "SI": 19, "SK": 24, "SM": 27, "ST": 25, "SV": 28, "TL": 23, "TN": 24,
    "TR": 26, "UA": 29, "VA": 22, "VG": 24, "XK": 20,
}  # fmt: skip


def iban_valid(compact: str) -> bool:
    """ISO 13616: the country's length, and the number mod 97 is 1 with the first four
    characters moved to the end and letters read as 10-35."""
    compact = compact.upper()
    if IBAN_LENGTHS.get(compact[:2]) != len(compact) or not compact.isalnum():
        return False
    rearranged = compact[4:] + compact[:4]
    return int("".join(str(int(char, 36)) for char in rearranged)) % 97 == 1


# --- Rules -----------------------------------------------------------------------------------

_EMAIL = re.compile(
    r"(?<![\w.+-])[A-Za-z0-9][A-Za-z0-9._%+-]{0,63}@(?:[A-Za-z0-9-]{1,63}\.)+[A-Za-z]{2,24}(?![\w@])"
)
#: `icon@2x.png` and `logo@3x.svg` are file names, not addresses.
_FILE_SUFFIX = re.compile(r"\.(?:png|jpe?g|gif|svg|webp|ico|js|css|ts|json|ya?ml|md|txt)$", re.I)

#: In one run, or in groups of four split by spaces (the last one shorter). Each form reads a
#: run of letters and digits one way only: a 40-character hash costs a few steps, not the
#: thousands of ways to cut it into groups.
_IBAN = re.compile(
    r"(?<![A-Za-z0-9])[A-Za-z]{2}\d{2}"
    r"(?:[A-Za-z0-9]{11,30}|(?: [A-Za-z0-9]{4}){2,7}(?: [A-Za-z0-9]{1,4})?)(?![A-Za-z0-9])"
)

#: 13-19 digits, in one run or in groups split by single spaces or dashes.
_CARD = re.compile(r"(?<![\w.,/:-])\d(?:[ -]?\d){12,18}(?![\w.,/:-]\d|\w)")
#: Card networks' first digits: Visa, Mastercard, American Express, Diners, JCB, Discover,
#: UnionPay, Maestro. A 16-digit order number passes the Luhn check one time in ten.
_CARD_PREFIX = re.compile(r"4|5[1-5]|2[2-7]|3[47]|3[0689]|6|5[06-9]")

_PHONE_INTERNATIONAL = re.compile(r"(?<![\w+])\+\d{1,3}(?:[ .-]?\(?\d{1,5}\)?){1,6}(?![\w.-]?\d)")
#: North American (555) 123-4567 / 555-123-4567, and national numbers with a trunk 0 written
#: in groups (020 7946 0958, 07700 900123); never part of a longer run of digit groups.
_PHONE_NATIONAL = re.compile(
    r"(?<![\w.,:/-])(?<!\d[ -])(?:\(\d{3}\) ?|\d{3}[-. ])\d{3}[-. ]\d{4}(?![\w-]|[.,:]\d|[ -]\d)"
    r"|(?<![\w.,:/-])(?<!\d[ -])0[1-9]\d{1,3}[ -]\d{3,4}(?:[ -]?\d{3,4})?(?![\w-]|[.,:]\d|[ -]\d)"
)
_PHONE_LEAD = re.compile(
    r"(?i)\b(?:phone|tel|telephone|mobile|cell|call me(?: at| on)?|text me(?: at| on)?"
    r"|whatsapp|reach me(?: at| on)?)\b(?: (?:number|no\.?|nr\.?|is))*[: ]{1,3}"
    r"(\+?\d[\d ().-]{5,18}\d)(?!\w)"
)

_SECRET_TOKENS = re.compile(
    r"(?<![\w-])(?:"
    r"sk-(?:proj-|ant-)?[A-Za-z0-9_-]{20,}"  # OpenAI, Anthropic
    r"|[sr]k_(?:live|test)_[A-Za-z0-9]{16,}"  # Stripe
    r"|gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,}"  # GitHub
    r"|glpat-[A-Za-z0-9_-]{20,}"  # GitLab
    r"|xox[abpors]-[A-Za-z0-9-]{10,}"  # Slack
    r"|AKIA[0-9A-Z]{16}"  # AWS access key id
    r"|AIza[0-9A-Za-z_-]{35}"  # Google API key
    r"|hf_[A-Za-z0-9]{30,}"  # Hugging Face
    r"|npm_[A-Za-z0-9]{36}"  # npm
    r"|SG\.[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{16,}"  # SendGrid
    r"|eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"  # JWT
    r")"
    r"|-----BEGIN [A-Z ]*PRIVATE KEY-----.*?(?:-----END [A-Z ]*PRIVATE KEY-----|\Z)"
    r"|(?<=\bBearer )[A-Za-z0-9._~+/=-]{16,}",
    re.S,
)
#: "password: hunter2", "my api key is 3f9a…", "token=abc123": the value after the lead-in.
_SECRET_LEAD = re.compile(
    r"(?i)\b(?:password|passwd|pwd|passcode|passphrase|pin|secret|api[ _-]?key|access[ _-]?key"
    r"|secret[ _-]?key|client[ _-]?secret|auth[ _-]?token|access[ _-]?token|token)"
    r"(?P<sep>\s*[:=]\s*|\s+is\s+)[\"']?(?P<value>[^\s\"']{3,200})"
)

_IPV4 = re.compile(
    r"(?<![\w.])(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)"
    r"(?![\w]|\.\d)"
)
_VERSION_LEAD = re.compile(r"(?i)(?:\bv|version|ver\.?|release|build|firmware)\s*$")


def _mask_email(text: str) -> str:
    def replace(match: re.Match[str]) -> str:
        found = match.group()
        return found if _FILE_SUFFIX.search(found) else placeholder("email")

    return _EMAIL.sub(replace, text)


def _mask_iban(text: str) -> str:
    def replace(match: re.Match[str]) -> str:
        found = match.group()
        groups = found.split(" ")
        # A short word after an IBAN written in groups ("… 00 and") is matched too: the
        # longest run of groups that checks out is the IBAN, the rest stays.
        for end in range(len(groups), 0, -1):
            if iban_valid("".join(groups[:end])):
                rest = " ".join(groups[end:])
                return placeholder("iban") + (" " + rest if rest else "")
        return found

    return _IBAN.sub(replace, text)


def _mask_card(text: str) -> str:
    def replace(match: re.Match[str]) -> str:
        found = match.group()
        digits = re.sub(r"[ -]", "", found)
        if _CARD_PREFIX.match(digits) and luhn_valid(digits) and _card_grouping(found):
            return placeholder("card")
        return found

    return _CARD.sub(replace, text)


#: How card numbers are written in groups: 4-4-4-4, Amex 4-6-5, Diners 4-6-4, 19 digits 4-4-4-4-3.
_CARD_GROUPS = {(4, 4, 4, 4), (4, 6, 5), (4, 6, 4), (4, 4, 4, 4, 3)}


def _card_grouping(found: str) -> bool:
    groups = tuple(len(group) for group in re.split(r"[ -]", found))
    return len(groups) == 1 or groups in _CARD_GROUPS


def _digit_count(text: str) -> int:
    return sum(char.isdigit() for char in text)


def _mask_phone(text: str) -> str:
    def lead(match: re.Match[str]) -> str:
        number = match.group(1)
        if not 7 <= _digit_count(number) <= 15:
            return match.group()
        start, end = match.span(1)
        whole = match.group()
        offset = match.start()
        return whole[: start - offset] + placeholder("phone") + whole[end - offset :]

    def international(match: re.Match[str]) -> str:
        found = match.group()
        return placeholder("phone") if 8 <= _digit_count(found) <= 15 else found

    text = _PHONE_LEAD.sub(lead, text)
    text = _PHONE_INTERNATIONAL.sub(international, text)

    def national(match: re.Match[str]) -> str:
        found = match.group()
        return placeholder("phone") if 10 <= _digit_count(found) <= 11 else found

    return _PHONE_NATIONAL.sub(national, text)


def _mask_secret(text: str) -> str:
    text = _SECRET_TOKENS.sub(placeholder("secret"), text)

    def lead(match: re.Match[str]) -> str:
        value = match.group("value").rstrip(".,;:!?)")
        stated = "is" in match.group("sep")
        # "my password is wrong", "the token is expired": after "is", only a value that does
        # not read as a word is a secret.
        if (stated and value.isalpha()) or value.startswith("["):
            return match.group()
        head = match.group()[: match.start("value") - match.start()]
        tail = match.group("value")[len(value) :]
        return head + placeholder("secret") + tail

    return _SECRET_LEAD.sub(lead, text)


def _mask_ip(text: str) -> str:
    def replace(match: re.Match[str]) -> str:
        found = match.group()
        address = ipaddress.IPv4Address(found)
        before = text[max(0, match.start() - 12) : match.start()]
        # Private, loopback and documentation-free addresses name no one; "v1.2.3.4" is a
        # version.
        if not address.is_global or _VERSION_LEAD.search(before):
            return found
        return placeholder("ip")

    return _IPV4.sub(replace, text)


_RULES: dict[str, Callable[[str], str]] = {
    "secret": _mask_secret,
    "email": _mask_email,
    "iban": _mask_iban,
    "card": _mask_card,
    "phone": _mask_phone,
    "ip": _mask_ip,
}


@dataclass(frozen=True, slots=True)
class Masker:
    """The built-in kinds to mask (all by default) and a project's own rules, each a function
    from text to masked text (see custom_patterns.custom_rule)."""

    kinds: Sequence[str] = KINDS
    extra: Sequence[Callable[[str], str]] = ()

    def mask(self, text: str) -> str:
        for rule in self.extra:
            text = rule(text)
        for kind in self.kinds:
            text = _RULES[kind](text)
        return text


DEFAULT = Masker()


def mask(text: str, *, kinds: Iterable[str] = KINDS) -> str:
    """The text with the built-in kinds of personal data replaced by placeholders."""
    return Masker(kinds=tuple(kinds)).mask(text) if kinds != KINDS else DEFAULT.mask(text)


_PLACEHOLDER = re.compile(r"\[([a-z][a-z0-9_]{0,23})\]")


def placeholders_in(text: str) -> list[str]:
    """The kinds of the placeholders in a masked text, in order ("[email]" -> "email")."""
    return _PLACEHOLDER.findall(text)
