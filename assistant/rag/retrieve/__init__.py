"""Steps 2 to 5 of docs/answers.md: search, rerank, the relevance gate, follow-ups, and the
retrieval cache."""
