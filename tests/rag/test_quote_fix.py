"""The fix, not the problem: within the section that answers, a quote that tells the symptom
goes on to the sentence or block that names what to type (the real cross-encoder reads the
sentences)."""

from __future__ import annotations

import pytest

from assistant.rag.quote.generator import ExtractiveGenerator
from assistant.rag.reading.scoring import CrossEncoderScorer
from assistant.rag.types import Candidate, Chunk, Prompt, Question

VISIBILITY = """If a task isn't acknowledged within the Visibility Timeout the task will be \
redelivered to another worker and executed.

This causes problems with ETA/countdown/retry tasks where the time to execute exceeds the \
visibility timeout; in fact if that happens it will be executed again, and again in a loop.

So you have to increase the visibility timeout to match the time of the longest ETA you're \
planning to use.

Note that Celery will redeliver messages at worker shutdown, so having a long visibility \
timeout will only delay the redelivery of 'lost' tasks in the event of a power failure or \
forcefully terminated workers.

Periodic tasks won't be affected by the visibility timeout, as this is a concept separate \
from ETA/countdown.

You can increase this timeout by configuring a transport option with the same name:

```python
app.conf.broker_transport_options = {'visibility_timeout': 43200}
```

The value must be an int describing the number of seconds."""
ETA = (
    "Using Redis as broker, a task scheduled with an ETA several hours ahead gets executed "
    "again and again. Why?"
)


@pytest.fixture(scope="module")
def quoting(reranker) -> ExtractiveGenerator:  # noqa: ANN001
    return ExtractiveGenerator(CrossEncoderScorer(reranker))


def answer(generator: ExtractiveGenerator, question: str, text: str) -> str:
    chunk = Chunk("v", text, "Using Redis > Caveats > Visibility timeout")
    passage = Candidate(chunk, 0.9, relevance=0.99, kept=True)
    prompt = Prompt(system="", messages=(), question=Question(question), passages=(passage,))
    return "".join(generator.stream(prompt))


def test_a_quote_of_the_symptom_goes_on_to_the_option_that_fixes_it(quoting):
    text = answer(quoting, ETA, VISIBILITY)
    assert "executed again, and again in a loop" in text  # the problem, as before
    assert "broker_transport_options = {'visibility_timeout': 43200}" in text  # and the fix
    assert "You can increase this timeout by configuring a transport option" in text
    assert "Periodic tasks won't be affected" not in text  # what lies between is left out


def test_a_fix_too_far_down_the_section_is_not_reached(quoting):
    far = VISIBILITY.replace(
        "You can increase", "Unrelated remark one.\n\nUnrelated remark two.\n\nYou can increase"
    )
    assert "broker_transport_options" not in answer(quoting, ETA, far)


def test_a_code_block_no_sentence_introduces_is_no_fix(quoting):
    bare = VISIBILITY.replace(
        "You can increase this timeout by configuring a transport option with the same name:\n\n",
        "",
    )
    assert "broker_transport_options" not in answer(quoting, ETA, bare)
