"""Personal data in visitors' messages, masked before anything is kept or sent (masking.py,
a project's own patterns in custom_patterns.py, `projects.masked`), and the project's privacy
settings (models.py). Below every door that takes a message in; what is kept about people,
and its export, erasure and retention, is the privacy app above them (assistant/privacy/)."""
