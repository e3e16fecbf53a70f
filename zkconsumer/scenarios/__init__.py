"""Scenario rules shared by the simulator, the Spark jobs and the lab (pure, seeded).

Below all three: :mod:`.splitbrain` (the at-scale split-brain plans: who is faulted, when) and
:mod:`.timing` (a run's timeouts). Nothing here touches a server, a client or a process, so a
simulated cell and the real run it is compared with read the very same plan and settings.
"""
