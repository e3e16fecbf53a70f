"""Offset stores: one interface (``store.py``), three homes for committed offsets.

``zookeeper.py`` (``/consumers/<g>/offsets``, the original's default), ``kafka.py``
(``offsets.storage=kafka`` with or without dual commit), ``fenced.py`` (the leader mode's
ZooKeeper offsets, every write conditional on the adopted assignment), and the auto-commit
thread that calls whichever is configured (``auto_commit.py``).
"""
