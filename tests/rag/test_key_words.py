"""The answerability check counts how many of the question's key words the best sentence holds
(assistant/rag/reading/words.py): a word's plural or verb form is the same key word."""

from __future__ import annotations

from assistant.rag.judge.answerability import Answerability
from assistant.rag.reading.scoring import CrossEncoderScorer, passage_text
from assistant.rag.reading.words import content_words
from assistant.rag.types import Candidate, Chunk, Question


def test_a_plural_or_a_verb_form_is_the_same_key_word():
    assert content_words("pages linking files queries expires tasks keys") == content_words(
        "page link file query expire task key"
    )
    # A verb's silent "e" goes with its endings: "deleted" holds the key word "delete".
    assert content_words("delete create expire cache") == content_words(
        "deleted creating expiring cached"
    )
    # "How long" asks for a duration, as "how many" for a number; "until" is glue.
    assert content_words("How long until the deletion is final?") == content_words("deletion final")
    # ...and only there: "long" elsewhere is a key word.
    assert "long" in content_words("How long may a long string be?")
    # An ending that is part of the word is kept: "class" is no plural, "status" no "statu".
    assert content_words("class status process bus seed") == {
        "class", "status", "proces", "bus", "seed",
    }  # fmt: skip


TITLE = "Writing your docs > Writing with Markdown > Internal links > Linking to pages"
#: MkDocs' user guide (mkdocs-doc 1.4), the section that answers, as the crawl kept it.
LINKING = [
    """When linking between pages in the documentation you can simply use the regular
Markdown linking syntax, including the *relative path* to the Markdown
document you wish to link to.

```markdown
Please see the [project license](license.md) for further details.
```

When the MkDocs build runs, these Markdown links will automatically be
transformed into an HTML hyperlink to the appropriate HTML page.""",
    """If the target documentation file is in another directory you'll need to make
sure to include any relative directory path in the link.

```markdown
Please see the [project license](../about/license.md) for further details.
```""",
]


def test_a_question_answered_in_the_plural_is_answered(reranker):  # noqa: ANN001
    """Asked with "page" and "link", written with "pages" and "linking": counted as sharing
    one of its four key words ("link to"), the check refused the section that answers (the
    MkDocs dev set, mk-012)."""
    question = Question("How should I link from one page of my docs to another page?")
    chunks = [
        Chunk(f"link-{i}", text, TITLE, "writing.html#linking") for i, text in enumerate(LINKING)
    ]
    relevance = reranker.score(question.text, [passage_text(c) for c in chunks])
    kept = sorted(
        (Candidate(c, None, r) for c, r in zip(chunks, relevance, strict=True)),
        key=lambda c: -(c.relevance or 0.0),
    )
    verdict = Answerability(scorer=CrossEncoderScorer(reranker)).judge(question, kept)
    assert verdict.features["sentence_coverage"] >= 0.5
    assert verdict.answerable, verdict
