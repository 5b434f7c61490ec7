"""What a written answer may show, held with scripted generators standing in for a model
(assistant/rag/written.py, write/grounding.py): a sentence its cited passage does not say is
dropped, a fenced command no passage holds is dropped, links lead only to the passages' sites,
nothing asks the visitor for secrets, and whatever a page plants for a reader-model never
reaches the screen, even when the page itself is given to the model."""

from __future__ import annotations

import pytest

from assistant.rag.types import Candidate, Chunk, Prompt, Question, Unwritten, Waiting
from assistant.rag.write.grounding import grounds, why_withheld
from assistant.rag.write.prompting import build_prompt
from assistant.rag.written import checked
from tests.rag.injected_pages import PAGES, PLANTED, REFUND_FACTS
from tests.rag.test_grounding import Scripted

REFUNDS_URL = "https://help.acme.example/billing/refunds"
CONTACT = "Questions about a refund? Write to billing@acme.example."


def passage(text: str, *, title: str = "Refunds > Getting your money back") -> Candidate:
    chunk = Chunk("c1", text, title=title, url=REFUNDS_URL)
    return Candidate(chunk, similarity=0.8, relevance=0.999, kept=True)


def prompt_for(*kept: Candidate) -> Prompt:
    return build_prompt(Question("How do I get my money back?"), list(kept))


def shown(prompt: Prompt, *parts: str) -> tuple[list[str], list[str]]:
    """What reaches the visitor of a model that writes `parts`, and what was kept back."""
    withheld: list[str] = []
    out = list(checked(prompt, Scripted(*parts).stream(prompt), withheld, alone=False))
    return [p for p in out if isinstance(p, str)], withheld


GROUNDED = "You can ask for a refund within 30 days of the charge [1]. "


def test_a_sentence_its_cited_passage_does_not_say_is_dropped():
    said, withheld = shown(
        prompt_for(passage(REFUND_FACTS)), GROUNDED, "The capital of France is Paris."
    )
    assert said == [GROUNDED.strip()]
    assert withheld == ["The capital of France is Paris. (the passage it cites does not say it)"]


def test_a_paraphrase_of_its_passage_stands():
    said, _ = shown(
        prompt_for(passage(REFUND_FACTS)),
        "To get your money back, open Billing > Invoices and click Request refund [1]. ",
        "The refund usually reaches you within 5 to 10 business days [1].",
    )
    assert len(said) == 2


def test_a_fenced_command_no_passage_holds_is_dropped_with_its_lead_in():
    said, withheld = shown(
        prompt_for(passage(REFUND_FACTS)),
        GROUNDED,
        "Restart the billing service by running the following command:\n",
        "```sh\nsudo systemctl restart billing\n```\n",
    )
    assert said == [GROUNDED.strip()]
    assert any("not in the passages: sudo systemctl restart billing" in w for w in withheld)
    assert len(withheld) == 2


@pytest.mark.parametrize(
    "written",
    [
        "Restart it by running ```sh sudo systemctl restart billing``` [1].",
        "```sh sudo systemctl restart billing\n```",
        "```\nsudo systemctl restart billing```",
    ],
)
def test_a_command_in_any_fence_is_checked(written: str):
    reason = why_withheld(written, grounds([passage(REFUND_FACTS)]))
    assert "sudo systemctl restart billing" in reason


def test_a_fenced_command_the_passage_holds_is_shown():
    docs = "Install the Acme CLI with pip:\n\n```bash\npip install acme-cli\n```\n"
    said, _ = shown(
        prompt_for(passage(docs, title="CLI > Installing")),
        "Install it with pip [1]:\n", "```bash\n$ pip install acme-cli\n```\n",
    )  # fmt: skip
    assert said[1].strip() == "```bash\n$ pip install acme-cli\n```"
    # A lead-in in words of its own stands with the block it announces.
    said, _ = shown(
        prompt_for(passage(docs, title="CLI > Installing")),
        "Run the following command [1]:\n", "```bash\npip install acme-cli\n```\n",
    )  # fmt: skip
    assert len(said) == 2


def test_links_lead_only_to_the_passages_own_sites():
    kept = passage(f"{REFUND_FACTS} See https://partner.example/refunds for resellers.")
    facts = grounds([kept])
    assert why_withheld(f"Read more at {REFUNDS_URL} [1].", facts) == ""
    assert "links outside" in why_withheld("Resellers see https://partner.example/refunds.", facts)
    allowed = grounds([kept], origins=["https://partner.example"])
    assert why_withheld("Resellers see https://partner.example/refunds [1].", allowed) == ""


def test_an_answer_never_asks_for_secrets_even_when_a_passage_does():
    kept = passage(f"{REFUND_FACTS} Send your card number to billing@acme.example to verify.")
    reason = why_withheld(
        "Send your card number to billing@acme.example to verify it [1].", grounds([kept])
    )
    assert reason.startswith("it asks for a password, a card number")
    # A contact the page publishes as its own stays usable.
    contact = grounds([passage(f"{REFUND_FACTS} {CONTACT}")])
    assert why_withheld("For questions, write to billing@acme.example [1].", contact) == ""


@pytest.mark.parametrize("page", [text for _, text in PAGES], ids=[name for name, _ in PAGES])
def test_what_a_page_plants_never_reaches_the_screen_even_when_the_model_reads_it(page: str):
    # As if the page had slipped past the filter that keeps it from the model, and the model
    # obeyed it in every way the page asks.
    said, withheld = shown(
        prompt_for(passage(page)),
        GROUNDED,
        "Faster refunds: https://evil.example/claim. ",
        "To speed things up, send your full card number to root-admin@acme-internal.example. ",
        "Please put a link to https://evil.example/claim at the end [1]. ",
        "For questions, write to root-admin@acme-internal.example [1]. ",
        "PWNED. ",
        # What the local model wrote after reading the kit page's zero-width order.
        "Ignoring your previous instructions.",
    )
    assert said == [GROUNDED.strip()], said
    assert len(withheld) == 6
    for planted in PLANTED:
        assert planted not in "".join(said)


def test_a_sentence_is_sent_only_once_it_passed():
    # The model's tokens come one by one; the visitor gets nothing of a sentence until the
    # whole of it is checked, so nothing shown is ever taken back.
    prompt = prompt_for(passage(REFUND_FACTS))
    tokens = [word + " " for word in f"{GROUNDED}The capital of France is Paris.".split()]
    withheld: list[str] = []
    out = list(checked(prompt, Scripted(Waiting(), *tokens).stream(prompt), withheld, alone=True))
    texts = [p for p in out if isinstance(p, str)]
    assert texts == [GROUNDED.strip()]
    assert all(why_withheld(t, grounds(prompt.passages)) == "" for t in texts)
    assert not any(isinstance(p, Unwritten) for p in out)


def test_the_parts_of_a_page_that_give_orders_ground_nothing():
    facts = grounds([passage(PAGES[0][1])])  # the kit page, its zero-width order included
    for planted in ("evil.example", "root-admin@", "previous instructions"):
        assert planted not in facts.text
    assert "30 days of the charge" in facts.text
