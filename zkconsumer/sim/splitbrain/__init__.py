"""The split-brain scenarios in the simulator, beside the herd models of :mod:`zkconsumer.sim`.

- :mod:`.simulate`: one row per (protocol, scenario, N, P, seed), the model each protocol runs
  under the scenario plan of :mod:`zkconsumer.scenarios.splitbrain` (what
  ``zkconsumer spark split-brain --mode sim`` runs on the executors);
- :mod:`.legacy`: the legacy group under split-brain faults (per-member views, cut-off members,
  retry budgets);
- :mod:`.formation`: whether N legacy members started together form a group at all.
"""
