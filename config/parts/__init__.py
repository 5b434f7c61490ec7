"""The settings by concern; config/settings.py, the one module Django loads, puts them
together (and keeps Django's own: apps, middleware, templates, static files, logging)."""
