"""A calibrated discrete-event simulator of consumer-group rebalancing (pure Python, no servers).

::

    from zkconsumer.sim import SimConfig, simulate
    simulate(SimConfig("zk-range", members=16, partitions=8, event="join", seed=1)).row()

Protocols: the legacy ZooKeeper consumer (``zk-range``, ``zk-roundrobin``; :mod:`.legacy`,
:mod:`.zkmodel`), broker-side ``eager-range`` and ``cooperative-sticky`` (:mod:`.broker`), and a
KIP-848-style ``kip848`` (:mod:`.kip848`), an unfitted model of the KIP whose rows carry
``simulated_only=True`` (the real KIP-848 runs are the lab's, on Apache Kafka 4.0.2).
Latencies come from a :class:`Calibration` (``zkconsumer calibrate`` writes one from the real
servers); requests per step from :mod:`.costs`. The protocols: :mod:`.protocols`; the model
simulating each: :mod:`.models` (one line per protocol in each).
``zkconsumer spark herd --mode sim`` runs grids of these on Spark (``docs/scale.md``).
"""

from zkconsumer.sim.calibration import Calibration
from zkconsumer.sim.config import EVENTS, PROTOCOLS, SimConfig
from zkconsumer.sim.result import COLUMNS, SimResult
from zkconsumer.sim.simulate import simulate

__all__ = ["COLUMNS", "EVENTS", "PROTOCOLS", "Calibration", "SimConfig", "SimResult", "simulate"]
