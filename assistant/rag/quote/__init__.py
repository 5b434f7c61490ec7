"""Step 7 of docs/answers.md, the built-in answerer: it quotes the section that answers."""
