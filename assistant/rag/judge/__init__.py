"""Step 6 of docs/answers.md: do the kept passages hold an answer, and what do they not say?"""
