"""The compare experiment: protocols x membership events on one topic shape, one fresh group
per run, the same metrics for every protocol.

``runner.py`` runs the matrix (``run_experiment``), ``spec.py`` holds what it asks for,
``scenario.py`` applies an event to a stable group, ``report.py`` and ``plots.py`` turn the
results into ``summary.md`` and PNGs, and ``output.py`` writes everything ``--out`` holds.
"""
