"""Step 7 of docs/answers.md, a written answer: the prompt, and the checks on what a model
writes."""
