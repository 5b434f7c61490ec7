"""The pure memory core: commands, refusals, the threshold cut, the injection turns, and the
calibration of bge-small-en-v1.5 on the seed's own cases (real embeddings, no database)."""

from __future__ import annotations

import pytest

from assistant.rag.memory import (
    ACK,
    MAX_FACT_CHARS,
    Command,
    FactHit,
    FactRefused,
    calibration,
    check_fact,
    injection,
    parse_command,
    relevant,
    stated_facts,
)
from assistant.rag.types import Question, Turn
from assistant.rag.write.prompting import REMINDER, build_prompt


@pytest.mark.parametrize(
    ("message", "command"),
    [
        ("remember I'm on the Enterprise plan", Command("remember", "I'm on the Enterprise plan")),
        (
            "Please remember that I deploy on Kubernetes.",
            Command("remember", "I deploy on Kubernetes."),
        ),
        ("Remember: I like sci-fi", Command("remember", "I like sci-fi")),
        ("What do you remember about me?", Command("recall")),
        ("what do you know about me", Command("recall")),
        ("forget everything", Command("forget_all")),
        ("Forget all about me.", Command("forget_all")),
        ("forget that I deploy on Kubernetes", Command("forget", "I deploy on Kubernetes")),
        ("forget Kubernetes", Command("forget", "Kubernetes")),
    ],
)
def test_it_recognises_memory_commands(message: str, command: Command) -> None:
    assert parse_command(message) == command


@pytest.mark.parametrize(
    "message",
    [
        "How do I get a refund?",
        "Can the app remember my login?",
        "remember me on this device?",
        "Does the widget remember conversations?",
        "Why did you forget?",
        "Forget password link is broken",
        "forget my password, what now",
        "forget the token?",
        "Remember me does not work",
    ],
)
def test_it_leaves_ordinary_questions_alone(message: str) -> None:
    assert parse_command(message) is None


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("", "nothing to remember"),
        ("   ", "nothing to remember"),
        ("x" * (MAX_FACT_CHARS + 1), "too long"),
        ("my e-mail is ana@example.com", "e-mail"),
        ("call me on +44 20 7946 0958", "phone"),
        ("my number is 555-123-4567", "phone"),
        ("my card is 4111 1111 1111 1111", "card"),
        ("card 4111111111111111", "card"),
    ],
)
def test_it_refuses_empty_oversized_and_contact_facts(text: str, reason: str) -> None:
    with pytest.raises(FactRefused, match=reason):
        check_fact(text)


def test_it_keeps_ordinary_facts_with_small_numbers() -> None:
    assert check_fact("  I'm on the Enterprise plan with 250 seats since 2024.  ") == (
        "I'm on the Enterprise plan with 250 seats since 2024"
    )


def test_it_takes_statements_but_not_questions_when_learning() -> None:
    message = "I'm on the Team plan. My email is a@b.co. Am I allowed to export? How do I export?"
    assert stated_facts(message) == ["I'm on the Team plan"]


def test_it_keeps_facts_above_the_threshold_at_most_two_best_first() -> None:
    hits = [
        FactHit("a", "A", 0.70),
        FactHit("b", "B", 0.95),
        FactHit("c", "C", 0.62),  # equal to the threshold: not above it
        FactHit("d", "D", 0.81),
    ]
    assert [h.id for h in relevant(hits, threshold=0.62)] == ["b", "d"]
    assert relevant(hits, threshold=0.99) == []


def test_it_injects_facts_as_a_conversation_turn_before_the_question() -> None:
    question = Question(
        "Any good sci-fi book recommendations?",
        history=(Turn("user", "hi"), Turn("assistant", "Hello!")),
        facts=("User likes reading sci-fi books",),
    )
    prompt = build_prompt(question, [])
    assert prompt.messages == (
        Turn("user", "hi"),
        Turn("assistant", "Hello!"),
        Turn("user", "Just so you know, user likes reading sci-fi books."),
        Turn("assistant", ACK),
        Turn("user", f"Any good sci-fi book recommendations?\n\n{REMINDER}"),
    )
    assert "sci-fi" not in prompt.system


def test_it_keeps_the_first_person_and_names_as_told() -> None:
    turns = injection(["I'm on the Enterprise plan", "AWS is where we host"])
    assert turns[0].content == "Just so you know, I'm on the Enterprise plan."
    assert turns[2].content == "Just so you know, AWS is where we host."


def test_it_has_a_calibration_per_embedder() -> None:
    assert calibration("ollama:nomic-embed-text:latest").recall == 0.8
    assert calibration("onnx:bge-small-en-v1.5").recall < 0.8
    assert calibration("some:unknown").recall == 0.8


FACTS = [
    "User likes reading sci-fi books",
    "I'm on the Enterprise plan",
    "I deploy on Kubernetes",
    "My favourite colour is green",
]


def _similarities(embedder, query: str) -> dict[str, float]:  # noqa: ANN001
    vectors = embedder.embed_documents(FACTS)
    wanted = embedder.embed_query(query)
    return {
        f: sum(a * b for a, b in zip(v, wanted, strict=True))
        for f, v in zip(FACTS, vectors, strict=True)
    }


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("sci-fi book recommendations", {"User likes reading sci-fi books"}),
        ("reading sci-fi", {"User likes reading sci-fi books"}),
        ("How do I deploy the app?", {"I deploy on Kubernetes"}),
        ("what's the weather", set()),
        ("Can I export my data?", set()),
        ("How do I reset my password?", set()),
    ],
)
def test_the_default_threshold_of_bge_behaves_like_the_seed(
    embedder, query: str, expected: set[str]
) -> None:  # noqa: ANN001
    threshold = calibration(embedder.id).recall
    found = {fact for fact, s in _similarities(embedder, query).items() if s > threshold}
    assert found == expected


def test_rewordings_are_near_duplicates_but_different_facts_are_not(embedder) -> None:  # noqa: ANN001
    duplicate = calibration(embedder.id).duplicate

    def similarity(a: str, b: str) -> float:
        x, y = embedder.embed_documents([a, b])
        return sum(p * q for p, q in zip(x, y, strict=True))

    assert similarity("I'm on the Enterprise plan", "I am on the enterprise plan.") >= duplicate
    assert similarity("I deploy on Kubernetes", "We deploy on kubernetes") >= duplicate
    assert similarity("I'm on the Enterprise plan", "I'm on the Pro plan") < duplicate
    assert similarity("I live in Berlin", "I live in Paris") < duplicate
