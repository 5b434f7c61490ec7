"""A near miss is refused for what the question names that the documents do not: a version,
money, another product, the asker's own account; and what is to come is never read from a
changelog. Pure: no database, no model."""

from __future__ import annotations

from assistant.rag.judge.unsaid import names, unsaid, versions
from assistant.rag.types import Candidate, Chunk


def kept(*texts: str, kind: str = "") -> list[Candidate]:
    return [
        Candidate(Chunk(f"c{n}", text, "Guide", kind=kind), 0.9, relevance=0.9, kept=True)
        for n, text in enumerate(texts)
    ]


CHANGES = kept(
    "Version 5.0 drops support for Python 2.7 and adds the new worker pool.", kind="changelog"
)


def test_a_version_no_passage_gives_is_named_as_missing():
    assert versions("When is Celery 6.0 going to be released?") == ["6.0"]
    assert versions("When will Requests 3 be released?") == ["Requests 3"]
    assert versions("Run it every 30 seconds on 4 workers") == []
    assert unsaid("Which brokers will Celery 6.0 drop?", CHANGES) == [
        "the passages do not mention version 6.0"
    ]
    assert unsaid("What did version 5.0 drop?", CHANGES) == []


def test_what_is_to_come_is_not_read_from_a_changelog():
    assert "a changelog tells what came" in " ".join(
        unsaid("What is on the roadmap for the next release?", CHANGES)
    )
    assert unsaid("What is on the roadmap for the next release?", kept("The roadmap: ...")) == []
    for coming in ("When is the next Celery security release scheduled?",
                   "Which Python versions are scheduled for the 6.x series?"):  # fmt: skip
        assert "a changelog tells what came" in " ".join(unsaid(coming, CHANGES)), coming
    assert unsaid("How do I list the scheduled tasks of a worker?", CHANGES) == []


def test_money_is_asked_of_passages_that_speak_of_money():
    docs = kept("The worker runs tasks from the queue.")
    assert unsaid("How much does a support contract cost per year?", docs)
    assert unsaid("How much does the Team plan cost?", kept("The Team plan is $10 a month.")) == []
    assert unsaid("How much power does the flux capacitor need?", docs) == []  # not money


def test_the_askers_own_account_is_not_answered_from_passages_about_something_else():
    docs = kept("Retries wait with exponential backoff.")
    assert unsaid("Can you reset the password of my account on the forum?", docs)
    assert unsaid("Can you escalate my GitHub issue?", docs)
    assert unsaid("How do I reset my password?", kept("To reset your password, ...")) == []
    # "for me" is how people ask, not an account
    assert unsaid("Does requests parse the Link header for me?", docs) == []


def test_a_product_the_search_never_met_is_named_as_missing():
    docs = kept("The migrate command moves tasks from one broker to another.")
    found = [*docs, *kept("Celery runs tasks. RabbitMQ and Redis are brokers.")]
    assert unsaid("How do I migrate my Celery workflows to Temporal?", docs, found) == [
        "the documents found do not mention Temporal"
    ]
    # The site's own subject may be absent from the passage that answers: it is in the search.
    assert unsaid("How do I make Celery use RabbitMQ?", docs, found) == []


def test_names_are_products_not_identifiers_or_sentence_starts():
    assert names("My task gets a ConnectionError. How can I have Celery retry it?") == ["Celery"]
    assert names("Should my startup use Celery or AWS Step Functions?") == [
        "Celery", "AWS", "Step", "Functions",
    ]  # fmt: skip
    assert names("I set an X-Api-Key header and the Content-Type is json.") == []
    # What a visitor says of their own payment or sign-in (the masker's `[iban]`) is no product.
    assert names("How do I get a refund? Refund to IBAN [iban], my PIN and OTP are set.") == []


def test_a_version_the_asker_uses_is_not_a_question_about_versions():
    docs = kept("Deploy the model with Ray Serve: serve run app:deployment.")
    assert unsaid("How do I deploy stable diffusion 2.1 with Ray Serve?", docs) == []
    assert unsaid("Does Ray Serve support stable diffusion 2.1?", docs) == [
        "the passages do not mention version 2.1"
    ]


def test_a_line_break_starts_a_sentence_whose_first_word_is_no_name():
    assert names("I am using Kuberay\n\nGiven the config, how do I embed Grafana?") == [
        "Kuberay", "Grafana",
    ]  # fmt: skip
