"""What a consumer group member needs whichever coordination mode it runs.

Both modes (``rebalance/``, the original's protocol, and ``coordination/``, the leader mode)
build on these and never on each other: the generation of partitions owned now
(``ownership.py``), the user's rebalance listener (``rebalance_listener.py``), re-arming watches
that turn ZooKeeper changes into triggers (``triggers.py``), the thread woken by those
triggers (``worker.py``), the session and offset store the connector builds for a mode
(``wiring.py``), and the interface the connector drives a mode through (``mode.py``).
"""
