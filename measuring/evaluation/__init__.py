"""Measure retrieval and the relevance gate on question sets with gold answers
(`python manage.py evaluate`). Plain Python: no Django, no database."""
