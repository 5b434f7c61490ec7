"""Semantic memory of what a user told the assistant (issue 8, seed 002). The pure parts
(commands, refusals, the injection turns) are in assistant/rag/memory.py."""
