"""``coordination.mode=leader``: ZooKeeper coordination without the herd and the split brain.

One elected leader (``election.py``) watches membership and topics and publishes the whole
assignment with a generation number in one znode (``leader.py``, ``record.py``); members watch
that znode only (``coordinator.py``) and hand over only what moves (``handover.py``). Ownership
is claimed with one multi-operation (``atomic_claims.py``) and offsets are committed
conditionally on the adopted generation (``offsets/fenced.py``). Pure decisions live in
``decide.py``; ``mode.py`` is what the connector drives. Built on ``membership/``, as the
legacy mode is; imports nothing from ``rebalance/``. See ``docs/leader.md``.
"""
