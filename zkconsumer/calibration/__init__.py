"""Measuring real servers for the simulator's calibration (``zkconsumer calibrate``).

A harness of its own, apart from the simulator it feeds (``zkconsumer.sim`` holds models only):
:mod:`.measure` (ZooKeeper and broker round trips, the crowded process, session expiry, and
:func:`.measure.calibration_from`, which turns the medians into a ``Calibration``),
:mod:`.read_service` (the server's CPU per read under many readers) and :mod:`.leave` (clean
leaves of a lab member, and the spread of every repeated duration). Child processes are real
modules run with ``python -m``: :mod:`.expiry_child`, :mod:`.reader_child`.
"""
