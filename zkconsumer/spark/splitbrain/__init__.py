"""The split-brain job: zombies, stale views and rebalance storms in groups of up to 10,000.

- :mod:`.job`: the Spark application (``--mode real`` or ``--mode sim``) and its options;
- :mod:`.real`: the driver side of one real run; :mod:`.task`: what one task does (members
  behind fault proxies, the scenario plan); :mod:`.metrics`: a run's metrics from its records;
- :mod:`.outcome`: what a run came to (measured, did not form, ended stuck, failed) and the
  job's exit status;
- :mod:`.table`: the sweep table, its summary and plots;
- :mod:`.validate`: the simulator (:mod:`zkconsumer.sim.splitbrain`) against the real runs.
"""
