"""What the assistant keeps about people: masking of personal data in visitors' messages
(masking, custom_patterns: plain Python), a project's masker (projects), erasure and export of
one person's data (erasure), retention periods (retention) and the audit record (models)."""
