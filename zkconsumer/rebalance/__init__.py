"""``coordination.mode=legacy``: the original's protocol, every member rebalancing the group.

The rebalancer thread (``rebalancer.py``) runs attempts (``attempt.py``) planned by pure
decisions (``plan.py``) and claimed one owner znode at a time with rollback
(``ordered_claims.py``); ``mode.py`` is what the connector drives. Built on ``membership/``, as
the leader mode is; imports nothing from ``coordination/``. See ``docs/connector.md``.
"""
