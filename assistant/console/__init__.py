"""The staff console at /admin/: sandbox, metrics, feedback (Django's own admin is at
/django-admin/)."""
