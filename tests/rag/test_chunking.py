from assistant.rag.chunking.pieces import MAX_CHARS_PER_TOKEN, chunk_markdown
from assistant.rag.chunking.sections import slugify, split_sections


def words(text: str) -> int:
    return len(text.split())


DOC = """Intro paragraph before any heading.

# Install

Run the installer.

## On Linux

Use the package manager.

```
# not a heading inside code
apt-get install thing
```

## On macOS

Use the disk image.
"""


def test_it_splits_on_headings_and_keeps_the_heading_path():
    sections = split_sections(DOC)
    assert [s.headings for s in sections] == [(), ("Install",), ("Install", "On Linux"),
                                              ("Install", "On macOS")]  # fmt: skip
    assert "# not a heading inside code" in sections[2].body


def test_pieces_carry_heading_path_and_anchor():
    pieces = chunk_markdown(DOC, count_tokens=words, max_tokens=100)
    linux = next(p for p in pieces if p.heading_path == "Install > On Linux")
    assert linux.anchor == "on-linux"
    assert "apt-get install thing" in linux.text


def test_no_piece_exceeds_the_token_budget_and_nothing_is_lost():
    paragraph = " ".join(f"Sentence number {i} says something useful." for i in range(60))
    doc = "# Long\n\n" + paragraph + "\n\nA closing paragraph."
    pieces = chunk_markdown(doc, count_tokens=words, max_tokens=50, overlap_tokens=10, title="T")
    assert len(pieces) > 5
    assert all(words(p.text) <= 50 for p in pieces)
    joined = " ".join(p.text for p in pieces)
    for i in range(60):
        assert f"Sentence number {i} says" in joined
    assert "A closing paragraph." in pieces[-1].text


def test_neighbouring_pieces_overlap_by_a_sentence():
    paragraphs = "\n\n".join(f"Paragraph {i} has exactly seven words." for i in range(12))
    pieces = chunk_markdown(paragraphs, count_tokens=words, max_tokens=30, overlap_tokens=10)
    assert len(pieces) >= 2
    last_of_first = pieces[0].text.split("\n\n")[-1]
    assert pieces[1].text.startswith(last_of_first)


def test_identical_text_gives_identical_hashes():
    first = chunk_markdown(DOC, count_tokens=words)
    second = chunk_markdown(DOC, count_tokens=words)
    assert [p.content_hash for p in first] == [p.content_hash for p in second]
    changed = chunk_markdown(DOC.replace("disk image", "installer app"), count_tokens=words)
    assert [p.content_hash for p in first][:-1] == [p.content_hash for p in changed][:-1]
    assert first[-1].content_hash != changed[-1].content_hash


def test_slugify_matches_common_anchor_style():
    assert slugify("Token expiry (v2)!") == "token-expiry-v2"


def test_a_fence_written_mid_line_still_opens_the_code_and_the_next_heading_counts() -> None:
    doc = (
        "# Copying\n\nThe function to use is ```python\n# Give threads time to run\n"
        "shutil.copyfile(src, dst)\n```\n\n## Moving\n\nUse shutil.move.\n"
    )
    sections = split_sections(doc)
    assert [s.headings for s in sections] == [("Copying",), ("Copying", "Moving")]
    copying = sections[0]
    assert [b.code for b in copying.blocks] == [False, True]
    assert copying.blocks[0].text == "The function to use is"
    assert "# Give threads time to run" in copying.blocks[1].text  # a comment, not a heading


def test_a_long_code_block_is_cut_between_lines_and_each_part_fenced() -> None:
    code = "\n".join(f"value_{i} = compute({i}, factor=2)" for i in range(40))
    doc = f"# Script\n\nRun this:\n\n```python\n{code}\n```\n"
    pieces = chunk_markdown(doc, count_tokens=words, max_tokens=48, overlap_tokens=10)
    code_parts = [p for p in pieces if "```python" in p.text]
    assert len(code_parts) > 2
    lines = []
    for part in code_parts:
        body = part.text[part.text.index("```python") :].splitlines()
        assert body[0] == "```python" and body[-1] == "```"
        lines += body[1:-1]
    assert lines == code.splitlines()  # every line once, whole, in order
    assert code_parts[0].text.startswith("Run this:")  # with its lead-in


def test_a_code_block_keeps_its_lead_paragraph_in_the_overlaps_room() -> None:
    lead = "With iter_lines you can iterate over streaming APIs. " * 4 + "Simply do this:"
    code = "\n".join(f"print(line_{i})" for i in range(20))
    doc = f"# Streaming\n\nAn opening paragraph.\n\n{lead}\n\n```python\n{code}\n```\n"
    lead_words, code_words = words(lead), words(f"```python\n{code}\n```")
    budget = 48
    assert budget < lead_words + code_words <= budget + 10 and code_words <= budget

    pieces = chunk_markdown(doc, count_tokens=words, max_tokens=budget, overlap_tokens=10)

    with_code = [p for p in pieces if "```python" in p.text]
    assert len(with_code) == 1 and with_code[0].text.startswith(lead)  # read with its lead
    assert [p.text for p in pieces if lead in p.text] == [with_code[0].text]  # said once
    # Without the overlap's room they part, as any two blocks over the budget do.
    apart = chunk_markdown(doc, count_tokens=words, max_tokens=budget, overlap_tokens=0)
    assert not any(lead in p.text and "```python" in p.text for p in apart)


def test_a_document_with_ids_anchors_chunks_by_them_and_one_without_by_slugs() -> None:
    with_ids = (
        "{#top}\n\nIntro.\n\n## Setup guide {#setup}\n\nStep one.\n\n{#step-two}\n\nStep two."
    )
    pieces = chunk_markdown(with_ids, count_tokens=words, max_tokens=32)
    # An anchored place inside a section starts a piece of its own, however short.
    assert [p.anchor for p in pieces] == ["top", "setup", "step-two"]
    assert [p.text for p in pieces[1:]] == ["Step one.", "Step two."]
    assert all("{#" not in p.text for p in pieces)  # anchor lines are not text
    assert chunk_markdown("## Setup guide\n\nStep one.", count_tokens=words)[0].anchor == (
        "setup-guide"
    )


def test_a_line_without_whitespace_is_cut_into_pieces_within_budget() -> None:
    """A 19 MB one-line upload became one 19 MB chunk: the tokenizer calls a run with no
    whitespace one word (or one [UNK]), so no token count ever said it was long."""
    blob = "QUJD" * 4_800_000  # 19.2 MB of base64, no space, no newline
    doc = f"# Upload\n\nThe attachment follows.\n\n{blob}\n\nAfter the blob."
    pieces = chunk_markdown(doc, count_tokens=words, max_tokens=128, title="T")
    assert all(len(p.text) <= 128 * MAX_CHARS_PER_TOKEN for p in pieces)
    assert "".join(p.text for p in pieces if "QUJD" in p.text and " " not in p.text) in blob
    assert sum(p.text.count("QUJD") for p in pieces) >= len(blob) // 4 - len(pieces)
    assert pieces[0].text.startswith("The attachment follows.")
    assert pieces[-1].text.endswith("After the blob.")


def test_a_minified_line_of_code_is_cut_and_every_part_stays_fenced() -> None:
    bundle = "var a=1;" * 2_000
    doc = f"```js\n{bundle}\n```"
    pieces = chunk_markdown(doc, count_tokens=words, max_tokens=64)
    assert len(pieces) > 1
    assert all(len(p.text) <= 64 * MAX_CHARS_PER_TOKEN for p in pieces)
    assert all(p.text.startswith("```js\n") and p.text.endswith("\n```") for p in pieces)
    assert "".join(p.text[len("```js\n") : -len("\n```")] for p in pieces) == bundle


def test_a_huge_heading_is_cut_short() -> None:
    pieces = chunk_markdown("# " + "H" * 1_000_000 + "\n\nBody.", count_tokens=words)
    assert [p.text for p in pieces] == ["Body."]
    assert len(pieces[0].heading_path) <= 300


def test_pieces_within_budget_under_the_real_tokenizer(embedder) -> None:  # noqa: ANN001
    blob = "".join(chr(0x4E00 + i % 500) for i in range(200_000))  # CJK: a token a character
    doc = f"Intro words.\n\n{blob} and then some text with/slashes/and-dashes" + "z" * 50_000
    pieces = chunk_markdown(doc, count_tokens=embedder.count_tokens, max_tokens=128)
    assert all(embedder.count_tokens(p.text) <= 128 for p in pieces)
    assert all(len(p.text) <= 128 * MAX_CHARS_PER_TOKEN for p in pieces)


def test_api_entries_of_one_section_are_pieces_of_their_own() -> None:
    reference = (
        "# Exceptions\n\n{#requests.TooManyRedirects}\n\nexception requests.TooManyRedirects\n"
        ":   Too many redirects.\n\n{#requests.ConnectTimeout}\n\n"
        "exception requests.ConnectTimeout\n:   The request timed out while trying to connect.\n\n"
        "Requests that produced this error are safe to retry.\n"
    )
    pieces = chunk_markdown(reference, count_tokens=words, max_tokens=100)
    assert [p.anchor for p in pieces] == ["requests.TooManyRedirects", "requests.ConnectTimeout"]
    assert "safe to retry" in pieces[1].text and "safe to retry" not in pieces[0].text
    assert all(p.heading_path == "Exceptions" for p in pieces)
