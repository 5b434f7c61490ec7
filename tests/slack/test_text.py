"""Answers as Slack mrkdwn: Slack's markup only where we make it, everything else as text."""

from __future__ import annotations

from assistant.slack.blocks import answer_message
from assistant.slack.text import link, mrkdwn, pieces, question_of, sources_line


def test_raw_html_and_slack_control_sequences_are_shown_as_text():
    text = mrkdwn("<script>alert(1)</script> & <!channel> <@U123> <https://evil.example|x>")
    assert "<" not in text and ">" not in text
    assert text == (
        "&lt;script&gt;alert(1)&lt;/script&gt; &amp; &lt;!channel&gt; &lt;@U123&gt; "
        "&lt;https://evil.example|x&gt;"
    )


def test_markdown_becomes_slacks_own_markup():
    markdown = (
        "## Rotating a key\n\nOpen **Settings** and click *Rotate* [1].\n"
        "- first\n* second\n\nSee [the guide](https://docs.example/keys?a=1&b=2) and `a<b`.\n"
        "```bash\necho '<hi>'\n```"
    )
    assert mrkdwn(markdown) == (
        "*Rotating a key*\n\nOpen *Settings* and click _Rotate_ [1].\n"
        "• first\n• second\n\nSee <https://docs.example/keys?a=1&amp;b=2|the guide> and "
        "`a&lt;b`.\n```echo '&lt;hi&gt;'```"
    )


def test_only_web_links_become_links():
    assert mrkdwn("[click](javascript:alert(1))") == "click"
    assert link("https://docs.example/a b>c", "A | B") == "<https://docs.example/a%20b%3Ec|A ¦ B>"


def test_sources_are_numbered_links_each_page_once():
    sources = [
        {"title": "API keys > Rotating", "url": "https://help.example/api-keys#rotating"},
        {"title": "API keys > Rotating", "url": "https://help.example/api-keys#rotating"},
        {"title": "Notes", "url": ""},
    ]
    assert sources_line(sources) == (
        "*Sources*\n1. <https://help.example/api-keys#rotating|API keys &gt; Rotating>\n3. Notes"
    )


def test_a_question_is_the_message_without_its_mentions():
    assert question_of("<@U0BOT0001>   how do I  reset <@U0OTHER|ada>?") == "how do I reset ?"


def test_a_question_is_read_as_the_member_typed_it_not_as_slack_escapes_it():
    typed = (
        "<@U0BOT0001> <!here> why is `a &lt; b &amp;&amp; c &gt; d` slow on "
        "<https://docs.example/q?a=1&amp;b=2|docs.example/q> in <#C0HELP|help>?"
    )
    assert question_of(typed) == "why is `a < b && c > d` slow on docs.example/q in #help?"
    assert question_of("see <https://docs.example/x>") == "see https://docs.example/x"


def test_a_long_answer_is_split_into_sections_slack_accepts():
    answer = ("A sentence of the answer. " * 300).strip()
    message = answer_message(
        answer=answer, sources=[], answer_id="a1", conversation_id="c1", handoff=False
    )
    sections = [b["text"]["text"] for b in message["blocks"] if b["type"] == "section"]
    assert len(sections) == 3 and all(len(s) <= 3000 for s in sections)
    assert " ".join(sections) == answer and len(message["text"]) <= 3000
    assert pieces("short") == ["short"]
