"""The herd job: how many requests, attempts and seconds a membership event costs, against N.

- :mod:`.job`: the Spark application (``--mode real`` or ``--mode sim``) and its options;
- :mod:`.grid`: the cells (protocol x N x P x event x seed); :mod:`.sweep`: ``--mode sim``, the
  simulator over the grid on the executors;
- :mod:`.real`: the driver side of ``--mode real`` (topic, run directory, the Spark stage);
  :mod:`.task`: what one task does with its connectors; :mod:`.metrics`: the runs' metrics,
  computed with Spark;
- :mod:`.tables`: the sweep table's schema and files; :mod:`.summary`: its summary and plots;
- :mod:`.validate`: the simulator against real runs; :mod:`.fit`: the fitted constants;
  :mod:`.request_types`: the requests of each event by type.
"""
