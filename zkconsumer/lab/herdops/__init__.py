"""ZooKeeper operations by kind per membership change, original members vs zkconsumer members.

``wire`` reads ZooKeeper's client protocol, ``tap`` records every operation of the members
through a proxy, ``count`` turns a window of records into per-kind counts, ``run`` drives the
experiment (``zkconsumer experiment herd-ops``).
"""
