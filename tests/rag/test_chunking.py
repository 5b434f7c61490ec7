from assistant.rag.chunking import chunk_markdown, slugify, split_sections


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
