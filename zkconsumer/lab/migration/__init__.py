"""The migration to broker coordination, run live (``run.py``: ``run_migration``)."""
