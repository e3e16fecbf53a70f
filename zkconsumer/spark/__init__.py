"""Spark jobs of the lab: real consumers hosted by Spark tasks, and the simulator sweep.

Both are ``spark-submit``-able (``spark-submit zkconsumer/spark/herd.py --mode real|sim ...``)
and wrapped by ``zkconsumer spark herd``; they run on ``local[*]`` unless ``--master`` names a
cluster. See ``docs/scale.md``.

- :mod:`.real`: the driver side of ``--mode real`` (topic, run directory in ZooKeeper, the
  Spark stage, metrics with Spark); :mod:`.real_task`: what one task does with its connectors.
- :mod:`.sweep`: ``--mode sim``, the simulator over a parameter grid.
- :mod:`.tables`: the sweep table's schema and files; :mod:`.summary`: summary.md and plots.
- :mod:`.validate`: the simulator against real runs.
"""

from zkconsumer.extras import require

require("spark", "zkconsumer.spark")  # before anything that needs it

