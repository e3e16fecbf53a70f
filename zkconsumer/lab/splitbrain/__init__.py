"""Split brain in the ZooKeeper-coordinated consumer, and what broker-side groups do instead.

Three scenarios, each a library function returning the lab's ``RunResult`` rows:

- :func:`run_stale_view`: some members see the group late (their coordination traffic is
  delayed), so members decide from different views and fight over owner znodes;
- :func:`run_zombie`: a member cut off for longer than its session keeps fetching while the
  others take its partitions;
- :func:`run_failover`: the ZooKeeper ensemble's leader dies during steady consumption and
  during a rebalance.

:func:`run_split_brain` runs one scenario over several protocols, as the CLI does.
"""

from zkconsumer.lab.splitbrain.experiment import run_split_brain
from zkconsumer.lab.splitbrain.failover import run_failover
from zkconsumer.lab.splitbrain.spec import SCENARIOS, SplitBrainSpec
from zkconsumer.lab.splitbrain.stale_view import run_stale_view
from zkconsumer.lab.splitbrain.zombie import run_zombie

__all__ = ["SCENARIOS", "SplitBrainSpec", "run_failover", "run_split_brain", "run_stale_view",
           "run_zombie"]
