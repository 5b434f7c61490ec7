"""What the quote and the judge both read: sentences and other units, question parts, words,
and the cross-encoder reading sentences against the question."""
