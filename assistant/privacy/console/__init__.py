"""The console's privacy request page (export or erase one person's data), in the console
shell like the feedback and ingestion pages."""
