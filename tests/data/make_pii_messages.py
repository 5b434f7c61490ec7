# ruff: noqa: E501
"""Writes tests/data/pii_messages.jsonl: help-desk messages in English, labelled with the
personal data in them (`pii`: kind and value) and the look-alikes that must stay as written
(`keep`: versions, order ids, prices, dates, timestamps, hashes, ids, tracking numbers).

The messages are written here as templates filled with values of every usual format (card
numbers with a valid check digit and a network's prefix, IBANs of many countries with valid
check digits, phone numbers as people type them); a few are written as people do that the
rules do not catch (a number spelled out, an address "at ... dot ..."), so recall is measured,
not assumed. Run it again only to change the set: `python tests/data/make_pii_messages.py`.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

HERE = Path(__file__).parent
rng = random.Random(44)

NAMES = [
    "jane.doe",
    "m.garcia",
    "kwame.o",
    "li.wei88",
    "sam+support",
    "a_nguyen",
    "t.schmidt",
    "priya.k",
    "olu.ade",
    "fatima.z",
    "johnsmith1972",
    "dev-team",
    "r.ossi",
    "kim_lee",
]
DOMAINS = [
    "example.com",
    "gmail.com",
    "outlook.co.uk",
    "acme-corp.io",
    "mail.uni-koeln.de",
    "yahoo.fr",
    "company.org",
    "startup.dev",
    "proton.me",
    "hotmail.com",
]


def email() -> str:
    return f"{rng.choice(NAMES)}@{rng.choice(DOMAINS)}"


def luhn_complete(partial: str) -> str:
    for check in "0123456789":
        digits = partial + check
        total = 0
        for position, char in enumerate(reversed(digits)):
            value = int(char)
            if position % 2:
                value = value * 2 - 9 if value > 4 else value * 2
            total += value
        if total % 10 == 0:
            return digits
    raise AssertionError


def card() -> str:
    prefix, length = rng.choice(
        [
            ("4", 16),
            ("51", 16),
            ("55", 16),
            ("2221", 16),
            ("37", 15),
            ("34", 15),
            ("6011", 16),
            ("65", 16),
            ("4", 13),
            ("62", 19),
        ]
    )
    body = prefix + "".join(rng.choice("0123456789") for _ in range(length - len(prefix) - 1))
    number = luhn_complete(body)
    style = rng.choice(["run", "spaces", "dashes"])
    if style == "run" or length not in (15, 16):
        return number
    sep = " " if style == "spaces" else "-"
    if length == 15:
        return sep.join([number[:4], number[4:10], number[10:]])
    return sep.join(number[i : i + 4] for i in range(0, 16, 4))


IBAN_SHAPES = {
    "DE": 22,
    "GB": 22,
    "FR": 27,
    "ES": 24,
    "NL": 18,
    "IT": 27,
    "BE": 16,
    "CH": 21,
    "PL": 28,
    "IE": 22,
    "AT": 20,
    "SE": 24,
    "PT": 25,
    "NO": 15,
}


def iban() -> str:
    country = rng.choice(sorted(IBAN_SHAPES))
    length = IBAN_SHAPES[country]
    letters = country in ("GB", "NL", "IE")
    bank = "".join(rng.choice("ABCDEFGHIJKLMNOPQRSTUVWXYZ") for _ in range(4)) if letters else ""
    bban = bank + "".join(rng.choice("0123456789") for _ in range(length - 4 - len(bank)))
    numeric = "".join(str(int(c, 36)) for c in bban + country + "00")
    compact = f"{country}{98 - int(numeric) % 97:02d}{bban}"
    if rng.random() < 0.5:
        return " ".join(compact[i : i + 4] for i in range(0, len(compact), 4))
    return compact


def digits(n: int) -> str:
    return "".join(rng.choice("0123456789") for _ in range(n))


def phone() -> str:
    area = str(rng.randint(201, 989))
    return rng.choice([
        f"+1 {area} {digits(3)} {digits(4)}", f"({area}) {digits(3)}-{digits(4)}",
        f"{area}-{digits(3)}-{digits(4)}", f"{area}.{digits(3)}.{digits(4)}",
        f"+44 20 {digits(4)} {digits(4)}", f"+44 7700 {digits(6)}", f"07700 {digits(6)}",
        f"020 {digits(4)} {digits(4)}", f"+49 30 {digits(8)}", f"+49 151 {digits(8)}",
        f"+33 6 {digits(2)} {digits(2)} {digits(2)} {digits(2)}", f"+33612{digits(6)}",
        f"+91 98{digits(3)} {digits(5)}", f"+61 4{digits(2)} {digits(3)} {digits(3)}",
        f"+1-{area}-{digits(3)}-{digits(4)}", f"+34 6{digits(2)} {digits(3)} {digits(3)}",
    ])  # fmt: skip


def secret() -> str:
    alnum = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
    rand = lambda n: "".join(rng.choice(alnum) for _ in range(n))  # noqa: E731
    return rng.choice([
        f"sk-proj-{rand(40)}", f"sk_live_{rand(24)}", f"ghp_{rand(36)}", f"AKIA{rand(16).upper()}",
        f"xoxb-{digits(11)}-{digits(12)}-{rand(24)}", f"AIza{rand(35)}", f"glpat-{rand(20)}",
        f"eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIx{rand(20)}.{rand(43)}", f"hf_{rand(34)}",
    ])  # fmt: skip


def password() -> str:
    return rng.choice(
        [
            "hunter2!",
            "Summer2024#",
            "p@ssw0rd123",
            "Tr0ub4dor&3",
            "letmein_99",
            "Xk9$mQ2v",
            "correcthorse42",
            "Qwerty!2345",
        ]
    )


def ip() -> str:
    return rng.choice(
        [
            "81.2.69.142",
            "203.0.113.77",
            "172.217.16.14",
            "93.184.216.34",
            "151.101.1.69",
            "86.145.22.201",
        ]
    )


def version() -> str:
    return rng.choice(
        [
            "2.4.1",
            "v3.12.0",
            "1.0.0-beta.3",
            "10.0.19041.1",
            "5.2.19",
            "18.2.0",
            "4.17.21",
            "v1.2.3.4",
            "14.4.1",
            "2024.11.19",
            "0.9.12",
        ]
    )


def order() -> str:
    return rng.choice([f"#{digits(6)}", f"ORD-{digits(8)}", f"{digits(9)}", f"A{digits(7)}",
                       f"INV-2024-{digits(5)}", f"{digits(12)}", f"{digits(16)}",
                       f"{digits(4)} {digits(4)} {digits(4)} {digits(4)}", f"1Z{digits(16)}",
                       f"{digits(3)}-{digits(7)}-{digits(7)}"])  # fmt: skip


def price() -> str:
    return rng.choice(["$49.99", "€1,299.00", "£12.50", "USD 2,400", "$0.99/month", "19.99 EUR"])


def timestamp() -> str:
    return rng.choice([f"2024-0{rng.randint(1, 9)}-1{rng.randint(0, 9)} 14:3{rng.randint(0, 9)}:07",
                       f"{rng.randint(1690000000, 1730000000)}", f"{rng.randint(1690000000000, 1730000000000)}",
                       "2023-11-05T08:15:30Z", "12/03/2024 09:41", "Mar 3, 2024 at 10:02 AM"])  # fmt: skip


def hash_() -> str:
    return rng.choice(
        ["".join(rng.choice("0123456789abcdef") for _ in range(n)) for n in (7, 40, 64, 32)]
    )


def ident() -> str:
    return rng.choice(["123e4567-e89b-12d3-a456-426614174000", f"usr_{digits(10)}", f"tenant {digits(8)}",
                       f"req-{digits(6)}-{digits(4)}", f"cus_{hash_()[:14]}", f"ticket {digits(7)}",
                       f"{digits(10)}", f"build {digits(5)}"])  # fmt: skip


LOOKALIKES = {"version": version, "order": order, "price": price, "timestamp": timestamp,
              "hash": hash_, "id": ident}  # fmt: skip

# (template, {slot: kind}); a kind of LOOKALIKES goes to `keep`, the others to `pii`.
TEMPLATES = [
    ("Hi, I can't log in. My account email is {a} and I reset my password twice.", {"a": "email"}),
    (
        "Please send the invoice for order {o} to {a}, the total was {p}.",
        {"o": "order", "a": "email", "p": "price"},
    ),
    ("My card {c} was declined when I tried to pay {p}. Why?", {"c": "card", "p": "price"}),
    ("I was charged twice on card ending in {c}, order {o}", {"c": "card", "o": "order"}),
    ("Can you refund {p} to my IBAN {i}? Order {o}.", {"p": "price", "i": "iban", "o": "order"}),
    ("Our bank details changed: new IBAN is {i}", {"i": "iban"}),
    ("Call me back on {t}, I'm available after 3pm.", {"t": "phone"}),
    ("The SMS code never arrives on {t}. I'm on version {v}.", {"t": "phone", "v": "version"}),
    (
        "After upgrading to {v} the export fails at {ts}. Request id {d}.",
        {"v": "version", "ts": "timestamp", "d": "id"},
    ),
    ("Build {v} crashes on start, commit {h}.", {"v": "version", "h": "hash"}),
    ("Here is my API key {s}, why does the API return 401?", {"s": "secret"}),
    ("I pasted the token {s} into the config but it still says unauthorized", {"s": "secret"}),
    ("password: {w} does not work on the mobile app {v}", {"w": "password", "v": "version"}),
    ("My password is {w} and the login page says invalid credentials", {"w": "password"}),
    ("Our server at {ip} cannot reach your webhook since {ts}.", {"ip": "ip", "ts": "timestamp"}),
    ("Order {o} shows {p} but the page said {p2}.", {"o": "order", "p": "price", "p2": "price"}),
    (
        "The webhook payload for event {d} has checksum {h}, is that right?",
        {"d": "id", "h": "hash"},
    ),
    ("Where do I change the billing email from {a} to {a2}?", {"a": "email", "a2": "email"}),
    ("Contact: {a}, phone {t}. Invoice {o} is wrong.", {"a": "email", "t": "phone", "o": "order"}),
    (
        "How do I pay with card {c}? The checkout for {o} keeps failing.",
        {"c": "card", "o": "order"},
    ),
    (
        "Upgrade from {v} to {v2} broke SSO; error at {ts}",
        {"v": "version", "v2": "version", "ts": "timestamp"},
    ),
    ("Tracking number {o} says delivered but I have nothing.", {"o": "order"}),
    ("Is {p} per seat or per workspace? We are on plan {d}.", {"p": "price", "d": "id"}),
    ("Text me at {t} when my ticket {d} is resolved", {"t": "phone", "d": "id"}),
    ("I'm {a}; my colleague {a2} cannot see the project.", {"a": "email", "a2": "email"}),
    ("Please wire the refund to {i} (account holder Jane Doe).", {"i": "iban"}),
    ("Docker image digest {h} fails the health check on {v}", {"h": "hash", "v": "version"}),
    (
        "The CSV export has rows dated {ts} but we asked for {ts2}",
        {"ts": "timestamp", "ts2": "timestamp"},
    ),
    ("secret={s} is in our .env, is it still valid?", {"s": "secret"}),
    ("Reach me at {t} or {a} about order {o}", {"t": "phone", "a": "email", "o": "order"}),
    ("Customer {d} paid {p} with {c} and got no receipt", {"d": "id", "p": "price", "c": "card"}),
    ("Why was I billed {p} on {ts}? Order {o}.", {"p": "price", "ts": "timestamp", "o": "order"}),
    ("Our release {v} with hash {h} is what we deploy.", {"v": "version", "h": "hash"}),
    ("What does error 0x80070005 mean when installing {v}?", {"v": "version"}),
    (
        "We are seeing {p} charges from order {o} and {o2}.",
        {"p": "price", "o": "order", "o2": "order"},
    ),
]

# Written as people write them, beyond what the rules aim at: measured as misses if missed.
HARD = [
    {"text": "email me at jane dot doe at example dot com please", "pii": [{"type": "email", "value": "jane dot doe at example dot com"}], "keep": []},
    {"text": "my number is 5551234567, call anytime", "pii": [{"type": "phone", "value": "5551234567"}], "keep": []},
    {"text": "Phone number: 415 555 0199 (mobile)", "pii": [{"type": "phone", "value": "415 555 0199"}], "keep": []},
    {"text": "card 4000 0566 5566 5556 exp 12/27 cvc 123", "pii": [{"type": "card", "value": "4000 0566 5566 5556"}], "keep": []},
    {"text": "You can write to JANE.DOE@EXAMPLE.COM", "pii": [{"type": "email", "value": "JANE.DOE@EXAMPLE.COM"}], "keep": []},
    {"text": "iban: fr14 2004 1010 0505 0001 3m02 606", "pii": [{"type": "iban", "value": "fr14 2004 1010 0505 0001 3m02 606"}], "keep": []},
    {"text": "Version 3.2.1 build 20240315 is slow, ticket 4829133", "pii": [], "keep": ["3.2.1", "20240315", "4829133"]},
    {"text": "See https://docs.example.com/api/v2/orders/123456789 for order 123456789", "pii": [], "keep": ["https://docs.example.com/api/v2/orders/123456789"]},
    {"text": "My password is not working since the update to 2.0", "pii": [], "keep": ["password is not working", "2.0"]},
    {"text": "The token expired again; is the token lifetime 3600 seconds?", "pii": [], "keep": ["3600"]},
    {"text": "pip install requests==2.31.0 fails with hash sha256:5f2b1c9a8e7d6c5b4a39281706f5e4d3c2b1a09f8e7d6c5b4a392817", "pii": [], "keep": ["2.31.0", "sha256:5f2b1c9a8e7d6c5b4a39281706f5e4d3c2b1a09f8e7d6c5b4a392817"]},
    {"text": "Our SKU 400012345678 is missing from the catalogue", "pii": [], "keep": ["400012345678"]},
    {"text": "logo@2x.png looks blurry on retina screens", "pii": [], "keep": ["logo@2x.png"]},
    {"text": "npm install react@18.2.0 then run on port 3000", "pii": [], "keep": ["react@18.2.0", "3000"]},
    {"text": "The server 10.0.0.12 in our VPC cannot reach 127.0.0.1:8080", "pii": [], "keep": ["10.0.0.12", "127.0.0.1:8080"]},
]  # fmt: skip


def fill(template: str, slots: dict[str, str]) -> dict[str, object]:
    values: dict[str, str] = {}
    pii: list[dict[str, str]] = []
    keep: list[str] = []
    makers = {"email": email, "card": card, "iban": iban, "phone": phone, "secret": secret,
              "password": password, "ip": ip, **LOOKALIKES}  # fmt: skip
    for slot, kind in slots.items():
        value = makers[kind]()
        values[slot] = value
        if kind in LOOKALIKES:
            keep.append(value)
        else:
            pii.append({"type": "secret" if kind == "password" else kind, "value": value})
    return {"text": template.format(**values), "pii": pii, "keep": keep}


def main() -> None:
    rows = [fill(template, slots) for _ in range(6) for template, slots in TEMPLATES]
    rows += HARD
    with (HERE / "pii_messages.jsonl").open("w") as out:
        for row in rows:
            out.write(json.dumps(row) + "\n")
    print(len(rows), "messages")


if __name__ == "__main__":
    main()
