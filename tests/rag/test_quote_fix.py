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


def test_a_fix_further_down_the_section_is_reached_when_it_tells_what_to_do(quoting):
    far = VISIBILITY.replace(
        "You can increase", "Unrelated remark one.\n\nUnrelated remark two.\n\nYou can increase"
    )
    text = answer(quoting, ETA, far)
    assert "executed again, and again in a loop" in text
    assert "broker_transport_options = {'visibility_timeout': 43200}" in text
    assert "Unrelated remark" not in text and "Periodic tasks won't be affected" not in text


def test_a_sentence_further_down_that_only_describes_is_no_fix(quoting):
    far = VISIBILITY.replace(
        "You can increase this timeout by configuring a transport option with the same name:\n\n"
        "```python\napp.conf.broker_transport_options = {'visibility_timeout': 43200}\n```",
        "Unrelated remark one.\n\nUnrelated remark two.\n\nUnrelated remark three.\n\n"
        "The timeout is kept in `broker_transport_options` under `visibility_timeout`.",
    )
    assert "broker_transport_options" not in answer(quoting, ETA, far)


SHOWING_OUTPUT = [
    """By default, if a test passes, Rust's test library captures anything printed to standard \
output. For example, if we call `println!` in a test and the test passes, we won't see the \
`println!` output in the terminal; we'll see only the line that indicates the test passed. If a \
test fails, we'll see whatever was printed to standard output with the rest of the failure \
message.

As an example, Listing 11-10 has a silly function that prints the value of its parameter and \
returns 10, as well as a test that passes and a test that fails.

When we run these tests with `cargo test`, we'll see the following output:

```console
$ cargo test
running 2 tests
test tests::this_test_will_pass ... ok
test tests::this_test_will_fail ... FAILED
```""",
    """Note that nowhere in this output do we see `I got the value 4`, which is what is printed \
when the test that passes runs. That output has been captured.

If we want to see printed values for passing tests as well, we can tell Rust to also show the \
output of successful tests with `--show-output`.

```console
$ cargo test -- --show-output
```""",
]


def test_the_fix_in_the_next_chunk_of_the_section_follows_the_symptom(quoting):
    """The quote names only what the question names (`println!`); the fix lies past the
    failing run and its output, in the section's next chunk, and tells what to do."""
    passages = tuple(
        Candidate(
            Chunk(f"c{n}", text, "Controlling How Tests Are Run > Showing Function Output",
                  url="tests.html#showing-function-output", document="tests.html", ordinal=n),
            0.9, relevance=0.99 - n / 10, kept=True,
        )
        for n, text in enumerate(SHOWING_OUTPUT)
    )  # fmt: skip
    question = "My tests print things with println! but I never see the output. How do I show it?"
    prompt = Prompt(system="", messages=(), question=Question(question), passages=passages)
    text = "".join(quoting.stream(prompt))
    assert "we won't see the `println!` output" in text
    assert "with `--show-output`" in text
    # The output of the failing run is no fix, nor what the output lacks.
    assert "running 2 tests" not in text and "Note that nowhere" not in text


def test_a_code_block_no_sentence_introduces_is_no_fix(quoting):
    bare = VISIBILITY.replace(
        "You can increase this timeout by configuring a transport option with the same name:\n\n",
        "",
    )
    assert "broker_transport_options" not in answer(quoting, ETA, bare)


CUSTOM_DOMAIN = """GitHub Pages includes support for using a Custom Domain for your site. In \
addition to the steps documented by GitHub, you need to take one additional step so that MkDocs \
will work with your custom domain.

You need to add a `CNAME` file to the root of your `docs_dir`. The file must contain a single \
bare domain or subdomain on a single line.

You may create the file manually, or use GitHub's web interface to set up the custom domain. If \
you use the web interface, GitHub will create the file for you and save it to the root of your \
"pages" branch.

So that the file does not get removed the next time you deploy, you need to copy the file to \
your `docs_dir`."""


def test_the_fix_close_by_is_not_put_aside_for_a_sentence_that_repeats_the_symptom(quoting):
    """Read whole after the quote, "So that the file does not get removed the next time you
    deploy" outscores the fix for "it breaks every time I deploy": the fix close by stands."""
    question = (
        "I use my own domain name with GitHub Pages and it breaks every time I deploy. "
        "What am I missing?"
    )
    text = answer(quoting, question, CUSTOM_DOMAIN)
    assert "You need to add a `CNAME` file to the root of your `docs_dir`." in text
