"""The forms a question is searched and read in: `(topic) question`, the question without its
topic, its request without the situation told before it, and, for a follow-up, joined to the
previous question."""

from __future__ import annotations

import re

from assistant.rag.types import Question

#: How many earlier user messages a follow-up carries into its retrieval query.
HISTORY_QUESTIONS = 1
#: Words by which a question points back at an earlier one. Only such a question is tried with
#: the previous question: a question that names its subject is judged exactly as if asked
#: alone, so an earlier question can neither let it through the gate nor keep it out.
POINTERS = frozenset(
    "it its it's they them their theirs this that these those one ones there he she him her "
    "his same such former latter else".split()
)
_LEADS = ("and ", "also ", "what about ", "how about ", "but ", "or ", "so ")
_WORDS = re.compile(r"[a-z']+")


def retrieval_query(question: Question) -> str:
    """The text that is embedded and reranked. The page topic goes first, in parentheses,
    because it carries what a short question leaves out ("When does it expire?")."""
    return search_queries(question)[0]


def search_queries(question: Question) -> list[str]:
    """The texts searched for the question as asked: the retrieval query first and, when a
    topic is given, the question without it. The topic rescues a vague question, but a question
    that already says what it is about is found better without it (Ray dev set: hit@5 0.613
    without the topic, 0.595 with it); the two searches are fused, so each question gets the
    better of both."""
    text = " ".join(question.text.split())
    topic = " ".join(question.topic.split())
    return [f"({topic}) {text}", text] if topic else [text]


def leans_on_history(text: str) -> bool:
    """Does the question point back at something said before ("How do I revoke one?", "What
    about annual plans?")? Only then may the previous question help find its passages."""
    lowered = " ".join(text.lower().split())
    return bool(POINTERS.intersection(_WORDS.findall(lowered))) or lowered.startswith(_LEADS)


def follow_up_query(question: Question) -> str | None:
    """The question joined to the previous user question(s), topic first; None when there is
    no history or the question does not lean on it."""
    if not leans_on_history(question.text):
        return None
    return joined_query(question, question.text)


def joined_query(question: Question, text: str) -> str | None:
    """`text` after the previous user question(s), topic first; None without history."""
    earlier = [t.content for t in question.history if t.role == "user"][-HISTORY_QUESTIONS:]
    if not earlier:
        return None
    joined = " ".join([*(" ".join(e.split()) for e in earlier), " ".join(text.split())])
    topic = " ".join(question.topic.split())
    return f"({topic}) {joined}" if topic else joined


_SENTENCE = re.compile(r"(?<=[\w)\]\"'`][?.!])\s+(?=[A-Za-z\"'(\[`])")
#: A request sentence shorter than this (in words) leans on what came before ("Why?").
REQUEST_WORDS = 5


def request_query(question: Question) -> str | None:
    """The question's request without the situation told before it, topic first ("Our API
    wants the token in an X-Api-Key header. How do I write my own auth class?" -> "How do I
    write my own auth class?"): the cross-encoder, trained on short queries, reads a passage
    against a long story less well than against the request it ends with. The request may
    point back at the story ("My beat schedule fires at the wrong hour. How do I make it use
    Europe/London time?": the time zone section reads 0.21 against the whole question, 0.96
    against its request): the whole question is read too, and a passage counts as relevant as
    the better reading. None when the question is one sentence or its request is too short to
    say anything alone ("... Why?")."""
    sentences = [s for s in _SENTENCE.split(" ".join(question.text.split())) if s]
    if len(sentences) < 2:
        return None
    asks = [s for s in sentences if s.endswith("?")] or sentences[-1:]
    request = asks[-1]
    if len(request.split()) < REQUEST_WORDS:
        return None
    topic = " ".join(question.topic.split())
    return f"({topic}) {request}" if topic else request


def earlier_query(question: Question) -> str:
    """The previous question as a query of its own, topic first ("" when none)."""
    earlier = previous_question(question)
    topic = " ".join(question.topic.split())
    return f"({topic}) {earlier}" if topic and earlier else earlier


def previous_question(question: Question) -> str:
    """The user's previous question, as the follow-up form joins it ("" when none)."""
    earlier = [t.content for t in question.history if t.role == "user"]
    return " ".join(earlier[-1].split()) if earlier else ""
