"""Ingestion: a Markdown document cut into sections, then into chunks."""
