"""What an extractive answer keeps: the code block a sentence introduces, the document's order,
each part of a two-part question, no stray fence and no sentence twice. The sentences are
scored by the real cross-encoder (flashrank, ONNX)."""

from __future__ import annotations

import pytest

from assistant.rag.quote.generator import ExtractiveGenerator
from assistant.rag.quote.text import term_text
from assistant.rag.reading.question_parts import question_parts
from assistant.rag.reading.scoring import CrossEncoderScorer, lexical_scorer
from assistant.rag.reading.units import sentences_of, split_units
from assistant.rag.retrieve.queries import request_query
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


def kept(chunk: Chunk, relevance: float = 0.9) -> Candidate:
    return Candidate(chunk, 0.9, relevance=relevance, kept=True)


def passage(text: str, title: str, *, document: str = "", ordinal: int = -1) -> Candidate:
    return kept(
        Chunk(f"{document}{ordinal}{title}", text, title, document=document, ordinal=ordinal)
    )


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


#: How to get a refund, then how long it takes. (REFUND has two durations, the 30 days to ask
#: and the 5 to 10 days it takes: the cross-encoder reads them within 0.0004 of each other for
#: "How long does it take?", and which comes first differs from one CPU to another.)
REFUND_STEPS = (
    "If you are not happy with a purchase, ask for a refund on the Orders page of your "
    "account. Refunds go back to the original payment method and usually arrive within 5 to "
    "10 business days."
)


def test_a_follow_up_quotes_what_answers_it_not_the_previous_answer_again(quoting):
    previous = "How do I get a refund?"
    said = f"{REFUND_STEPS} [1]"
    follow_up = Question(
        "How long does it take?",
        history=(Turn("user", previous), Turn("assistant", said)),
        leans_on=previous,
    )
    text = answer(quoting, follow_up, passage(REFUND_STEPS, "Refunds > Getting your money back"))
    assert "5 to 10 business days" in text
    assert "Orders page" not in text


SCHEDULE = """Example: Run the tasks.add task every 30 seconds.

```python
app.conf.beat_schedule = {
    'add-every-30-seconds': {'task': 'tasks.add', 'schedule': 30.0},
}
```

If you're wondering where these settings should go then please see Configuration."""
RETRY_ENTRY = """retry(args=None, kwargs=None, exc=None, countdown=None, max_retries=None)
    :   Retry the task, adding it to the back of the queue.

Example

```python
raise self.retry(countdown=60 * 5, exc=exc)
```"""


def test_an_example_lead_is_quoted_with_the_code_it_introduces(quoting):
    text = answer(
        quoting,
        Question("How do I run a task every 30 seconds?"),
        passage(SCHEDULE, "Periodic Tasks > Entries"),
    )
    assert text.startswith("Example: Run the tasks.add task every 30 seconds. [1]")
    assert "app.conf.beat_schedule" in text and "'schedule': 30.0" in text
    assert "Configuration" not in text  # the code ends the quote


def test_an_api_entry_is_quoted_as_its_signature_and_first_sentence(quoting):
    text = answer(
        quoting,
        Question("How do I retry a task?"),
        passage(RETRY_ENTRY, "celery.app.task > Task"),
    )
    assert text.startswith("`retry(args=None, kwargs=None, exc=None, countdown=None, max_retr")
    assert "`: Retry the task, adding it to the back of the queue. [1]" in text


def test_a_quote_reads_on_into_the_next_chunk_of_its_section(quoting):
    first = "Cookie jars can also be passed in to requests. Use a jar to scope cookies:"
    second = "```python\njar.set('tasty_cookie', 'yum', domain='httpbin.org', path='/cookies')\n```"
    chunks = [
        kept(Chunk(f"c{n}", text, "Quickstart > Cookies", url="quickstart.html#cookies",
                   document="quickstart", ordinal=n), r)
        for n, (text, r) in enumerate(((first, 0.9), (second, 0.6)))
    ]  # fmt: skip
    text = answer(quoting, Question("How do I send a cookie for one domain only?"), *chunks)
    assert "domain='httpbin.org'" in text
    assert text.count("[1]") == 1 and "[2]" not in text  # one section, one source


def test_citations_count_from_one_in_the_order_the_sources_appear(quoting):
    question = Question("How long does a refund take?")
    other = passage("Invoices are sent by e-mail at the start of each month.", "Invoices")
    refund = passage(REFUND, "Refunds")
    prompt = quoting.arrange(Prompt(system="", messages=(), question=question,
                                    passages=(other, refund)))  # fmt: skip
    assert prompt.passages[0] is refund
    text = "".join(quoting.stream(prompt))
    assert "5 to 10 business days" in text and "[1]" in text and "[2]" not in text


def test_sentences_are_not_cut_after_an_abbreviation():
    assert sentences_of(
        "In the event of a network problem (e.g. DNS failure), Requests raises ConnectionError. "
        "All exceptions inherit from RequestException."
    ) == [
        "In the event of a network problem (e.g. DNS failure), Requests raises ConnectionError.",
        "All exceptions inherit from RequestException.",
    ]


def test_a_question_is_not_split_inside_a_noun_phrase_code_or_an_operator():
    for one in (
        "How can I send a cookie only for a particular domain and path?",
        "How do I set the cookie SameSite and secure flags?",
        "How do I set different connect and read timeouts?",
        "Why does `a and b` return b?",
    ):
        assert question_parts(one) == [one]
    assert question_parts("What does the ?: operator do and how do I use it?") == [
        "What does the ?: operator do?",
        "How do I use it?",
    ]


def test_a_quote_reads_on_into_the_chunk_that_follows_in_its_section(quoting):
    text = "Some notes first. To run a job every 30 seconds, add an entry to the schedule."
    lead = Chunk("a", text, "Scheduling", url="s.html#every", document="7", ordinal=3)
    after = Chunk("b", "```bash\nacme schedule add --every 30s\n```\n\nEntries persist.",
                  "Scheduling", url="s.html#every", document="7", ordinal=4)  # fmt: skip
    elsewhere = Chunk("c", "Unrelated words.", "Other", url="s.html#other", document="7", ordinal=5)
    prompt = Prompt(
        system="", messages=(), question=Question("How do I run a job every 30 seconds?"),
        passages=(kept(lead),), neighbours=(after, elsewhere),
    )  # fmt: skip
    answered = "".join(quoting.stream(prompt))
    assert "add an entry to the schedule." in answered
    assert "acme schedule add --every 30s" in answered and "Unrelated" not in answered
    without = "".join(quoting.stream(Prompt("", (), prompt.question, prompt.passages)))
    assert "acme schedule add" not in without


EXCEPTIONS = """exception requests.TooManyRedirects(*args, **kwargs)
:   Too many redirects.

exception requests.ConnectTimeout(*args, **kwargs)
:   The request timed out while trying to connect to the remote server.

Parameters
:   **request** – the request that timed out.

Requests that produced this error are safe to retry.

exception requests.ReadTimeout(*args, **kwargs)
:   The server did not send any data in the allotted amount of time."""


def test_a_sentence_of_an_api_entry_is_named_by_its_own_entry_not_the_passages_first(quoting):
    chunk = Chunk("x", EXCEPTIONS, "Developer Interface > Exceptions", kind="reference",
                  url="api.html#requests.TooManyRedirects", document="api", ordinal=3)  # fmt: skip
    text = answer(
        quoting,
        Question("Which timeout error means the request is safe to retry?"),
        kept(chunk),
    )
    assert "safe to retry" in text
    assert "requests.TooManyRedirects" not in text
    assert "requests.ConnectTimeout" in text, text


GUIDE = """When using the default of early acknowledgment, having a prefetch multiplier setting
of *one* means the worker will reserve at most one extra task for every worker process."""
SETTING = """Default: 4.

How many messages to prefetch at a time multiplied by the number of concurrent processes.
Set it with `worker_prefetch_multiplier = 1` to reserve one task at a time."""


def test_a_second_section_about_as_relevant_is_quoted_after_the_first(quoting):
    guide = kept(Chunk("g", GUIDE, "Optimizing > Reserve one task at a time",
                       url="optimizing.html#reserve-one", document="opt", ordinal=0),
                 0.99)  # fmt: skip
    setting = kept(Chunk("s", SETTING, "Configuration > worker_prefetch_multiplier",
                         url="configuration.html#worker-prefetch-multiplier",
                         document="conf", ordinal=4),
                   0.93)  # fmt: skip
    unrelated = kept(Chunk("u", REFUND, "Refunds", url="refunds.html", document="r"), 0.6)
    text = answer(
        quoting,
        Question("One worker grabs many of my long tasks. Which setting controls how many "
                 "messages a worker reserves?"),
        guide, setting, unrelated,
    )  # fmt: skip
    assert "prefetch multiplier" in text and "`worker_prefetch_multiplier = 1`" in text
    assert "[1]" in text and "[2]" in text
    assert "refund" not in text.lower()  # a passage that reads far less relevant is not quoted


TIME_ZONES = """Periodic Tasks > Time Zones
The periodic task schedules uses the UTC time zone by default, but you can change the time zone
used using the `timezone` setting.

An example time zone could be Europe/London:

```python
timezone = 'Europe/London'
```"""


def test_a_request_that_points_back_at_its_story_is_read_alone_too(reranker):  # noqa: ANN001
    question = Question("My beat schedule fires at the wrong hour, it looks like it's using UTC. "
                        "How do I make it use Europe/London time?")  # fmt: skip
    request = request_query(question)
    assert request == "How do I make it use Europe/London time?"
    whole, alone = (
        reranker.score(question.text, [TIME_ZONES])[0],
        reranker.score(request, [TIME_ZONES])[0],
    )
    # Read against the whole story the passage that answers stays under the gate's 0.5.
    assert whole < 0.5 <= alone
    assert request_query(Question("It fires at the wrong hour. Why?")) is None


LISTS = """CPython's lists are really variable-length arrays, not Lisp-style linked lists. The
implementation uses a contiguous array of references to other objects, and keeps a pointer to
this array and the array's length in a list head structure.

This makes indexing a list `a[i]` an operation whose cost is independent of the size of the
list or the value of the index.

When items are appended or inserted, the array of references is resized. Some cleverness is
applied to improve the performance of appending items repeatedly.

Tuples are described in the next section, with their own memory layout."""


def test_a_quote_reads_on_while_the_next_paragraph_still_answers(quoting):
    text = answer(
        quoting,
        Question("How are lists implemented in CPython?"),
        passage(LISTS, "Design FAQ > How are lists implemented in CPython?"),
    )
    assert "contiguous array of references" in text
    assert "the array of references is resized" in text  # the answer goes on
    assert "Tuples are described" not in text  # what does not answer is not quoted


def test_another_chunk_of_the_first_quotes_section_may_be_quoted_too(quoting):
    texts = (
        "If we want to access the headers the server sent back to us, we do this:\n\n"
        "```\n>>> r.headers\n{'content-length': '56170', 'x-cache': 'HIT'}\n```",
        "However, if we want to get the headers we sent the server, we simply access the "
        "request, and then the request's headers:\n\n```\n>>> r.request.headers\n"
        "{'Accept': '*/*', 'User-Agent': 'python-requests/1.2.0'}\n```",
    )
    chunks = [
        kept(Chunk(f"h{n}", text, "Advanced Usage > Request and Response Objects",
                   url="advanced.html#request-and-response-objects", document="advanced",
                   ordinal=n * 3), 0.98)
        for n, text in enumerate(texts)
    ]  # fmt: skip
    text = answer(
        quoting, Question("how can i see which headers requests actually sent to the server?"),
        *chunks,
    )  # fmt: skip
    assert "r.request.headers" in text and "r.headers\n" in text
    assert "[2]" not in text  # one section, one source


def test_a_signature_reads_as_code_and_a_field_name_as_words():
    assert term_text("get(timeout=None, propagate=True)") == "`get(timeout=None, propagate=True)`:"
    assert term_text("requests.codes") == "`requests.codes`:"
    assert term_text("id = None") == "`id = None`:"
    assert term_text("Parameters") == "Parameters:"
    assert term_text("Return type") == "Return type:"


SESSIONS = """The Session object keeps certain parameters across requests. It also keeps cookies
across all requests made from the Session instance, and uses `urllib3`'s connection pool.

So if you make several requests to the same host, the underlying TCP connection is reused,
which can make them much faster.

A Session object has all the methods of the main API."""


def test_a_sentence_that_points_back_is_quoted_after_what_it_points_to(quoting):
    text = answer(
        quoting,
        Question("My many calls to one host are slow. How do I reuse the TCP connection?"),
        passage(SESSIONS, "Advanced > Session Objects"),
    )
    # The best sentence ("So if you make several requests ...") names neither the object nor
    # how: the two sentences it points back to do.
    assert "TCP connection is reused" in text
    assert text.index("The Session object keeps") < text.index("It also keeps cookies")
    assert text.index("It also keeps cookies") < text.index("So if you make")
    assert "all the methods" not in text


BODY_BEFORE = """By default the body of a response is downloaded at once. You can defer it until
you read `Response.content` with the `stream` parameter:

```python
r = client.get(url, stream=True)
```"""
BODY_AFTER = """At this point only the response headers have been downloaded and the connection
remains open, so reading the content can depend on them:

```python
if int(r.headers['content-length']) < TOO_LONG:
    content = r.content
```"""


def test_a_chunk_that_starts_by_pointing_back_is_quoted_with_the_chunk_before_it(quoting):
    before = Chunk("b0", BODY_BEFORE, "Advanced > Body Content Workflow", url="adv.html#body",
                   document="adv", ordinal=6)  # fmt: skip
    after = Chunk("b1", BODY_AFTER, "Advanced > Body Content Workflow", url="adv.html#body",
                  document="adv", ordinal=7)  # fmt: skip
    question = Question("Can I check the Content-Length header before downloading the body?")
    prompt = Prompt(system="", messages=(), question=question,
                    passages=(kept(after, 0.99),),
                    neighbours=(before,))  # fmt: skip
    text = "".join(quoting.stream(prompt))
    assert "stream=True" in text  # what "At this point" means, from the chunk before
    assert text.index("stream=True") < text.index("At this point")
    assert "TOO_LONG" in text
    without = answer(quoting, question, kept(after, 0.99))
    assert "stream=True" not in without


OK_ENTRY = """property ok
:   Returns True if `status_code` is less than 400, False if not.

This attribute checks whether the status code is between 400 and 600. If the status code is
between 200 and 400, this will return True. This is **not** a check for `200 OK`."""


def test_a_later_sentence_of_an_api_entry_comes_after_the_entrys_first_sentence(quoting):
    chunk = Chunk("ok", OK_ENTRY, "Developer Interface > Response", kind="reference",
                  url="api.html#requests.Response.ok", document="api", ordinal=2)  # fmt: skip
    text = answer(
        quoting,
        Question("Does r.ok mean the status code was exactly 200?"),
        kept(chunk, 0.99),
    )
    assert "not** a check for `200 OK`" in text
    assert "less than 400" in text  # the entry's own summary
    assert text.index("less than 400") < text.index("not** a check")


EXPIRES = """Default: Expire after 1 day.

Time (in seconds, or a `timedelta` object) after which stored task results are deleted. A
built-in periodic task deletes the results after this time."""


def test_a_setting_quoted_from_its_own_section_is_named_and_a_part_pointing_back_is_not_missing(
    quoting,
):  # noqa: ANN001
    chunk = Chunk("e", EXPIRES, "Configuration > Result backend settings > result_expires",
                  url="configuration.html#result-expires", document="conf", ordinal=40)  # fmt: skip
    text = answer(
        quoting,
        Question("How long are task results kept before they are deleted, and can I change "
                 "that?"),
        kept(chunk, 0.99),
    )  # fmt: skip
    assert text.startswith("`result_expires`: ")  # which setting the sentences are about
    assert "stored task results are deleted" in text
    assert "Not found" not in text  # "can I change that?" asks about the setting quoted
    # A part that names its own subject and that nothing speaks to is still named.
    other = answer(
        quoting,
        Question("How long are task results kept before they are deleted? How do I get a "
                 "refund for my plan?"),
        kept(chunk, 0.99),
    )  # fmt: skip
    assert "Not found in the documents: How do I get a refund for my plan?" in other


VISIBILITY = """If a job isn't acknowledged within the visibility timeout, it is delivered to
another worker and run again.

This causes problems with delayed jobs whose delay exceeds the visibility timeout: they run
again, and again, in a loop.

So you have to increase the `visibility_timeout` to match the longest delay you plan to use.

Periodic jobs are not affected by the visibility timeout."""


def test_a_paragraph_that_points_back_at_the_quote_goes_on_with_it(quoting):
    text = answer(
        quoting,
        Question("A job delayed by several hours runs again and again. Why?"),
        passage(VISIBILITY, "Using the queue > Caveats > Visibility timeout"),
    )
    assert "again, and again, in a loop" in text
    assert "If a job isn't acknowledged" in text  # what "This causes problems" points to
    assert "increase the `visibility_timeout`" in text  # what "So" draws from it
    assert "Periodic jobs" not in text


def test_an_it_that_points_ahead_starts_no_reach_back():
    from assistant.rag.quote.sections import quote_from
    from assistant.rag.reading.units import passage_items

    items = passage_items(0, "Version 2 dropped Python 2.\n\nIt is *highly* recommended to move "
                             "to Python 3 now.\n\nIt still reads old config files.")  # fmt: skip
    ahead, back = items[1], items[2]
    assert [u.text for u in quote_from(items, ahead, max_words=10)][0] == ahead.text
    assert [u.text for u in quote_from(items, back, max_words=10)][0] == ahead.text


THEMES = """Now change how the site looks. Edit the `acme.yml` file and add a `theme` setting:

```yaml
site_name: Acme
theme: midnight
```

Save your changes, and you'll see the Midnight theme being used."""


def test_a_sentence_right_after_an_example_is_quoted_after_the_example(quoting):
    text = answer(
        quoting, Question("How do I switch to the midnight theme?"), passage(THEMES, "Themes")
    )
    # The best sentence says what follows from the example, the example says what to do.
    assert "Save your changes" in text
    assert "theme: midnight" in text
    assert text.index("add a `theme` setting:") < text.index("theme: midnight")
    assert text.index("theme: midnight") < text.index("Save your changes")


def test_a_quoted_paragraph_is_read_and_quoted_without_its_quotation_marks(quoting):
    mail = (
        "From the mailing list:\n\n"
        "> > SQLite does not enforce the length of a VARCHAR. You can declare\n"
        "> > a VARCHAR(10) and SQLite will be happy to store a 500-million character\n"
        "> > string there.\n>\n> And it keeps all 500 million characters intact."
    )
    said = answer(
        quoting, Question("Does SQLite enforce the length of a VARCHAR(10) column?"),
        passage(mail, "FAQ > Lengths"),
    )  # fmt: skip
    assert "You can declare a VARCHAR(10) and SQLite will be happy" in said
    assert ">" not in said.replace("[1]", "")


SCHEDULE_LINES = [
    "from acme import Scheduler",
    "",
    "scheduler = Scheduler()",
    "",
    "@scheduler.on_start",
    "def setup(sender):",
    "    # Calls report('daily') every morning.",
    "    sender.add_job(report.s('daily'), hour=7)",
    "",
    "    # Calls report('hourly') every hour.",
    "    sender.add_job(report.s('hourly'), minute=0)",
    "",
    "    # Calls cleanup() every Sunday night.",
    "    sender.add_job(",
    "        cleanup.s(),",
    "        day_of_week=6,",
    "    )",
]
REPORT_LINES = ["", "@scheduler.job", "def report(kind):", "    print(kind)"]


def _cut_section(lines: list[str], max_tokens: int) -> list[Chunk]:
    """The section as the chunker cuts it, stored as the product stores chunks."""
    from assistant.rag.chunking.pieces import chunk_markdown

    code = "\n".join(["```python", *lines, "```"])
    lead = "To run a job on a schedule, add it when the scheduler starts."
    markdown = f"# Jobs\n\n{lead}\n\n{code}\n"
    pieces = chunk_markdown(
        markdown, count_tokens=lambda t: len(t) // 4, max_tokens=max_tokens, overlap_tokens=0
    )
    return [
        Chunk(f"j{n}", p.text, p.heading_path, url="jobs.html#jobs", document="3", ordinal=n)
        for n, p in enumerate(pieces)
    ]


def test_an_example_the_chunker_cut_in_parts_is_quoted_as_one_block(quoting):
    chunks = _cut_section(SCHEDULE_LINES, max_tokens=60)
    assert len(chunks) == 3 and chunks[2].text.startswith("```python")  # cut twice
    question = Question("How do I run a job every hour on a schedule?")
    prompt = Prompt("", (), question, passages=(kept(chunks[0]),), neighbours=tuple(chunks[1:]))
    answered = "".join(quoting.stream(prompt))
    assert "add it when the scheduler starts" in answered
    assert "sender.add_job(report.s('hourly'), minute=0)" in answered
    assert "        day_of_week=6,\n    )" in answered
    # One block, fenced once, with no fence left inside it.
    assert answered.count("```") == 2


def test_a_cut_example_too_long_to_quote_whole_ends_at_a_blank_line_not_inside_a_call(quoting):
    lines = [*SCHEDULE_LINES, *REPORT_LINES, *REPORT_LINES]  # 25 lines: the limit
    chunks = _cut_section([*lines, *REPORT_LINES], max_tokens=60)  # 29 lines
    question = Question("How do I run a job every hour on a schedule?")
    prompt = Prompt("", (), question, passages=(kept(chunks[0]),), neighbours=tuple(chunks[1:]))
    answered = "".join(quoting.stream(prompt))
    block = answered[answered.index("```") : answered.rindex("```") + 3]
    assert block.count("```") == 2
    assert "sender.add_job(report.s('hourly'), minute=0)" in block
    body = block.splitlines()[1:-1]
    assert len(body) <= 25 and body[-1] == "    print(kind)"


def test_an_example_is_quoted_after_what_it_is_an_example_of():
    from assistant.rag.quote.sections import quote_from
    from assistant.rag.reading.units import passage_items

    items = passage_items(
        0,
        "Themes can be changed. The `extra_css` option adds your own stylesheets to a theme. "
        "To use it, put the files in your docs folder. For example, to change the color of "
        "the headers, create a file called `extra.css` next to your pages.\n\n"
        "To check that it works, run the server.",
    )  # fmt: skip
    example = next(u for u in items if u.text.startswith("For example"))
    quoted = [u.text for u in quote_from(items, example, max_words=60)]
    assert quoted[0].startswith("The `extra_css` option")  # what "To use it" points back to
    assert quoted[1].startswith("To use it") and quoted[2] == example.text
    assert "Themes can be changed." not in quoted
    # "To check that ..." names a purpose; it points back to nothing.
    check = next(u for u in items if u.text.startswith("To check"))
    assert quote_from(items, check, max_words=60)[0] == check


def test_two_code_blocks_a_short_line_parts_stay_two_blocks():
    from assistant.rag.quote.sections import section_items

    once = Chunk("c0", "You can also give a client certificate as a file path:\n\n```python\n"
                 "get(url, cert='client.pem')\n```", "Certificates", url="adv.html#certs",
                 document="4", ordinal=0)  # fmt: skip
    persistent = Chunk("c1", "or persistent:\n\n```python\ns.cert = 'client.pem'\n```",
                       "Certificates", url="adv.html#certs", document="4", ordinal=1)  # fmt: skip
    items = section_items([kept(once)], 0, [persistent])
    assert [u.text for u in items if u.kind == "code"] == [
        "```python\nget(url, cert='client.pem')\n```",
        "```python\ns.cert = 'client.pem'\n```",
    ]


def test_a_kept_chunk_that_is_only_the_rest_of_an_example_is_quoted_from_its_lead(quoting):
    lead, rest, last = _cut_section(SCHEDULE_LINES, max_tokens=60)
    question = Question("How do I call cleanup every Sunday night?")  # the rest's own words
    prompt = Prompt("", (), question, passages=(kept(rest), kept(lead)), neighbours=(last,))
    answered = "".join(quoting.stream(prompt))
    # The rest of the example alone is no quote: it is quoted whole, after its lead.
    assert answered.startswith("To run a job on a schedule, add it when the scheduler starts.")
    assert answered.count("```") == 2 and "from acme import Scheduler" in answered


def test_the_quote_starts_in_a_passage_read_about_as_well_as_the_best():
    """A sentence that repeats the question's words, in a passage the gate read far below the
    best (0.70 beside 0.99: 3.7 logits), does not start the quote: the best passage's sentence
    does, the other follows it as a quote of its own. Word overlap scores the sentences here,
    so the repeating one is surely the best sentence."""
    quoting = ExtractiveGenerator(lexical_scorer)
    said = answer(
        quoting,
        Question("How do I revoke an API token?"),
        kept(Chunk("keys", "Click **Revoke** next to the key in Settings. It stops working at "
                   "once:\n\n```bash\nacme keys revoke KEY_ID\n```", "Keys > Revoking"),
             relevance=0.99),
        kept(Chunk("scopes", "How you revoke an API token depends on the API token's scope.",
                   "Tokens > Scopes"), relevance=0.70),
    )  # fmt: skip
    assert said.startswith("Click **Revoke** next to the key in Settings."), said
    assert "How you revoke an API token depends on the API token's scope. [2]" in said
