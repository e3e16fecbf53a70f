"""``coordination.mode=leader``: ZooKeeper coordination without the herd and the split brain.

One elected leader (``election.py``) watches membership and topics and publishes the whole
assignment with a generation number in one znode (``leader.py``, ``record.py``); members watch
that znode only (``coordinator.py``). Ownership is claimed with one multi-operation and offsets
are committed conditionally on the adopted generation (``claims.py``). Pure decisions live in
``decide.py``. See ``docs/leader.md``.
"""
