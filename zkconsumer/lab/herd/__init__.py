"""The herd experiment: what one membership change costs as the group grows.

``run.py`` runs the sweep (``run_herd``), ``spec.py`` holds what it asks for and finds,
``servers.py`` the ZooKeeper of its own, ``settle.py`` when an event's window ends,
``fits.py`` the growth fits and ``report.py`` its results, summary and plots.
"""
