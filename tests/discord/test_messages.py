"""Answers as Discord messages, and what an interaction says: pure functions, no database."""

from __future__ import annotations

import time

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from assistant.discord.interactions import asked_in, conversation_id, pressed_in
from assistant.discord.messages import (
    action_of,
    answer_messages,
    custom_id,
    link,
    markdown,
    pieces,
    sources_block,
)
from assistant.discord.signing import is_signed, public_key_problem
from tests.discord.conftest import PUBLIC_KEY, SIGNING_KEY, signature

ANSWER_ID = "0b7f3c9e-2a51-4f1c-9d0e-5b8a7c6d4e21"


def test_links_show_no_preview_and_titles_cannot_break_them():
    assert link("https://docs.example/keys?a=1&b=(2)", "Keys [beta] *new*") == (
        r"[Keys \[beta\] \*new\*](<https://docs.example/keys?a=1&b=%282%29>)"
    )
    assert link("javascript:alert(1)", "Click") == "Click"
    assert link("https://docs.example/a b>c", "x") == "[x](<https://docs.example/a%20b%3Ec>)"


def test_markdown_keeps_discords_own_and_mutes_previews():
    text = markdown(
        "## Rotating\n\n#### Step one\nOpen **Settings** [1]. See [the guide](https://d.example/g)."
        "\n```bash\necho [x](https://not.a/link)\n```"
    )
    assert text == (
        "## Rotating\n\n**Step one**\nOpen **Settings** [1]. See [the guide](<https://d.example/g>)."
        "\n```bash\necho [x](https://not.a/link)\n```"
    )


def test_sources_are_numbered_links_each_page_once():
    block = sources_block(
        [{"url": "https://d.example/a", "title": "A"}, {"url": "https://d.example/a", "title": "A"},
         {"url": "https://d.example/b", "title": "B"}]
    )  # fmt: skip
    assert block == "**Sources**\n1. [A](<https://d.example/a>)\n3. [B](<https://d.example/b>)"


def test_a_long_text_is_cut_between_paragraphs_then_sentences_never_over_the_limit():
    paragraph = "One sentence here. " * 30
    parts = pieces("\n\n".join([paragraph.strip()] * 6), limit=1000)
    assert all(len(part) <= 1000 for part in parts) and len(parts) > 3
    assert all(part.endswith(".") for part in parts)
    words = "no stops at all " * 200
    assert all(len(part) <= 500 for part in pieces(words, limit=500))


def test_a_code_block_cut_in_two_is_closed_and_opened_again():
    code = "```\n" + "\n".join(f"line {n}" for n in range(400)) + "\n```"
    parts = pieces("Run this:\n" + code, limit=1000)
    assert len(parts) > 2
    for part in parts:
        assert len(part) <= 1000 and part.count("```") % 2 == 0, part


def test_an_answer_keeps_its_buttons_under_its_last_message():
    [message] = answer_messages(
        answer="Click **Rotate** [1].", sources=[{"url": "https://d.example/k", "title": "Keys"}],
        answer_id=ANSWER_ID, conversation_id="discord-abc", handoff=True,
    )  # fmt: skip
    assert message["allowed_mentions"] == {"parse": []}
    [row] = message["components"]
    ids = [button["custom_id"] for button in row["components"]]
    assert ids == [f"askdocs_vote_up:{ANSWER_ID}", f"askdocs_vote_down:{ANSWER_ID}",
                   "askdocs_handoff:discord-abc"]  # fmt: skip
    assert action_of(ids[2]) == ("askdocs_handoff", "discord-abc")
    assert action_of("someone_elses:x") is None and action_of("askdocs_vote_up:") is None
    assert len(custom_id("askdocs_handoff", "x" * 200)) == 100


def test_a_thread_is_one_conversation_a_channel_one_per_member():
    thread = {"guild_id": "G", "channel_id": "T", "in_thread": True}
    assert conversation_id(user_id="A", **thread) == conversation_id(user_id="B", **thread)
    channel = {"guild_id": "G", "channel_id": "C", "in_thread": False}
    assert conversation_id(user_id="A", **channel) != conversation_id(user_id="B", **channel)
    assert len(conversation_id(user_id="A", **channel)) <= 64


def test_an_ask_is_read_from_a_server_or_a_direct_message():
    question = {"name": "question", "value": "  Hi \n there "}
    base = {"id": "9", "application_id": "1", "token": "t", "type": 2, "channel_id": "C",
            "data": {"name": "ask", "options": [question]}}  # fmt: skip
    in_server = asked_in({**base, "guild_id": "G", "member": {"user": {"id": "U"}},
                          "channel": {"id": "C", "type": 11}})  # fmt: skip
    assert in_server is not None
    assert (in_server.text, in_server.user_id, in_server.in_thread) == ("Hi there", "U", True)
    in_dm = asked_in({**base, "user": {"id": "U"}})
    assert in_dm is not None and in_dm.guild_id == "" and not in_dm.in_thread
    assert asked_in({**base, "data": {"name": "other"}, "user": {"id": "U"}}) is None
    assert asked_in({**base, "user": {}}) is None
    assert pressed_in({"type": 3, "id": "8", "user": {"id": "U"}, "data": {}}) is None


def test_a_signature_is_good_for_this_body_this_key_and_five_minutes():
    now = time.time()
    stamp = str(int(now))
    body = b'{"type": 1}'
    good = signature(SIGNING_KEY, stamp, body.decode())
    assert is_signed(public_key=PUBLIC_KEY, signature=good, timestamp=stamp, body=body, now=now)
    assert not is_signed(public_key=PUBLIC_KEY, signature=good, timestamp=stamp,
                         body=body + b" ", now=now)  # fmt: skip
    assert not is_signed(public_key=PUBLIC_KEY, signature=good, timestamp=stamp, body=body,
                         now=now + 301)  # fmt: skip
    other = signature(Ed25519PrivateKey.generate(), stamp, body.decode())
    assert not is_signed(public_key=PUBLIC_KEY, signature=other, timestamp=stamp, body=body,
                         now=now)  # fmt: skip
    assert public_key_problem(PUBLIC_KEY) == ""
    assert "64 hexadecimal" in public_key_problem("not-a-key")
