"""Spark jobs of the lab: real consumers hosted by Spark tasks, and the simulator on executors.

One package per job, each ``spark-submit``-able through its ``job.py`` and wrapped by a
``zkconsumer spark ...`` verb; they run on ``local[*]`` unless ``--master`` names a cluster.
See ``docs/scale.md`` and ``docs/split-brain-at-scale.md``.

- :mod:`.herd`: the herd sweep (``spark-submit zkconsumer/spark/herd/job.py --mode real|sim``),
  its validation against real runs, the fit, the request types;
- :mod:`.splitbrain`: the split-brain sweep (``spark-submit zkconsumer/spark/splitbrain/job.py``)
  and its validation.

What both jobs use, beside them: :mod:`.session` (the SparkSession), :mod:`.script` (the
``spark-submit`` entry), :mod:`.progress` (cells done on the driver), :mod:`.task_control` (the
run directory in ZooKeeper through which a real run's driver and tasks agree).
"""

from zkconsumer.extras import require

require("spark", "zkconsumer.spark")  # before anything that needs it
