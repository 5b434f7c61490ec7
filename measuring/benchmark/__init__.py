"""`python manage.py bench`: latency, scale, cache, concurrency and ingestion measurements of
the real pipeline, each compared with what it can be compared with (the bare libraries, exact
search, a first ask). One module per section; `report.py` prints them."""
