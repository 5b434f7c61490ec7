"""What an extractive answer keeps: the code block a sentence introduces, the document's order,
each part of a two-part question, no stray fence and no sentence twice. The sentences are
scored by the real cross-encoder (flashrank, ONNX)."""

from __future__ import annotations

import pytest

from assistant.rag.extractive import CrossEncoderScorer, ExtractiveGenerator, split_units
from assistant.rag.question_parts import question_parts
from assistant.rag.types import Candidate, Chunk, Prompt, Question, Turn

INSTALL = """The tool runs on Linux, macOS and Windows. Install the Acme CLI with pip:

```bash
pip install acme-cli
```

Check that it works with `acme --version`."""
LOGIN = """Create an API key first. Then log in with the key:

```bash
acme login --key YOUR_API_KEY
```

Run `acme logout` to remove the key."""
REFUND = (
    "If you are not happy with a purchase, you can ask for a refund within 30 days. Refunds "
    "go back to the original payment method and usually arrive within 5 to 10 business days."
)


def passage(text: str, title: str, *, document: str = "", ordinal: int = -1) -> Candidate:
    chunk = Chunk(f"{document}{ordinal}{title}", text, title, document=document, ordinal=ordinal)
    return Candidate(chunk, 0.9, relevance=0.9, kept=True)


@pytest.fixture(scope="module")
def quoting(reranker) -> ExtractiveGenerator:  # noqa: ANN001
    return ExtractiveGenerator(CrossEncoderScorer(reranker))


def answer(generator: ExtractiveGenerator, question: Question, *passages: Candidate) -> str:
    prompt = Prompt(system="", messages=(), question=question, passages=passages)
    return "".join(generator.stream(prompt))


def test_a_sentence_ending_with_a_colon_keeps_the_code_block_after_it():
    install, check = split_units(0, INSTALL)[1:]
    assert install.text == "Install the Acme CLI with pip:"
    assert install.code == "```bash\npip install acme-cli\n```"
    assert check.code == ""


def test_a_passage_cut_inside_a_code_block_quotes_no_code_and_no_fence():
    units = split_units(0, "    x = int(s)\n```\n\nThe syntax is as follows:\n\n```\nint(x)\n```")
    assert [u.text for u in units] == ["The syntax is as follows:"]
    assert units[0].code == "```\nint(x)\n```"


def test_a_two_part_question_is_split_into_its_requests():
    assert question_parts("How do I install the Acme CLI and log in? Show me the commands.") == [
        "How do I install the Acme CLI?",
        "How do I log in?",
    ]
    assert question_parts("What is a token and how do I revoke one?") == [
        "What is a token?",
        "How do I revoke one?",
    ]
    for one in ("How do I install the CLI and the SDK?", "How do I create and rotate a key?"):
        assert question_parts(one) == [one]


def test_each_part_is_answered_with_its_commands_in_the_documents_order(quoting):
    # The login passage ranks first; the document puts installing first.
    text = answer(
        quoting,
        Question("How do I install the Acme CLI and log in? Show me the commands."),
        passage(LOGIN, "Acme CLI > Logging in", document="cli", ordinal=1),
        passage(INSTALL, "Acme CLI > Installing the CLI", document="cli", ordinal=0),
    )
    assert "pip install acme-cli" in text and "acme login --key" in text
    assert text.index("pip install acme-cli") < text.index("acme login")
    assert text.count("```") % 2 == 0 and not text.startswith("```")


def test_a_part_no_sentence_answers_is_said_to_be_missing(quoting):
    text = answer(
        quoting,
        Question("How do I install the Acme CLI and what does the Enterprise plan cost?"),
        passage(INSTALL, "Acme CLI > Installing the CLI", document="cli", ordinal=0),
    )
    assert "pip install acme-cli" in text
    assert "Not found in the documents: What does the Enterprise plan cost?" in text


def test_overlapping_passages_quote_a_sentence_once(quoting):
    text = answer(
        quoting,
        Question("How long does a refund take?"),
        passage(REFUND, "Refunds", document="refunds", ordinal=0),
        passage(REFUND, "Refunds", document="refunds", ordinal=1),
    )
    assert text.count("5 to 10 business days") == 1


def test_a_follow_up_quotes_what_answers_it_not_the_previous_answer_again(quoting):
    previous = "How do I get a refund?"
    said = f"{REFUND} [1]"
    follow_up = Question(
        "How long does it take?",
        history=(Turn("user", previous), Turn("assistant", said)),
        leans_on=previous,
    )
    text = answer(quoting, follow_up, passage(REFUND, "Refunds > Getting your money back"))
    assert "5 to 10 business days" in text
    assert "ask for a refund within 30 days" not in text
