"""The driver's side of a real run's stop, against the suite's ZooKeeper and broker: the
producer stops when the coordinating task reports ``done``, however late, and the tasks get
the last acknowledged offsets to drain to; a stage that ends first gets nothing to drain to."""

from __future__ import annotations

import threading

from zkconsumer.lab.producer import SteadyProducer
from zkconsumer.spark.task_control import RunDirectory, drain_target, stop_producing, wait_for


def _run(kazoo_client, unique, broker, new_topic):
    run = RunDirectory(kazoo_client, unique("stop"))
    run.create()
    producer = SteadyProducer(broker.bootstrap, new_topic(2), 2, rate=50.0)
    producer.start()
    stage_over = threading.Event()
    stopper = threading.Thread(target=stop_producing, args=(run, producer, stage_over))
    stopper.start()
    return run, producer, stage_over, stopper


def test_the_producer_stops_at_done_and_the_tasks_get_its_last_offsets(
        kazoo_client, unique, broker, new_topic):
    run, producer, stage_over, stopper = _run(kazoo_client, unique, broker, new_topic)
    try:
        assert wait_for(lambda: len(producer.produced) >= 10, 60.0)
        assert stopper.is_alive() and run.get("produced") is None  # still producing
        run.put("done", {"event_ts": 1.0, "settled_ts": 2.0})
        stopper.join(90)
        assert not stopper.is_alive()
        sent = producer.sent
        last = drain_target(run, wait_s=0.0)
        # every record sent was acknowledged before the offsets were published, and the
        # published offsets are the last of them, on both partitions
        assert len(producer.produced) == sent and producer.errors == []
        assert last == producer.last_offsets() and set(last) == {"0", "1"}
        assert producer.sent == sent  # stopped: nothing sent since
    finally:
        stage_over.set()
        producer.stop()
        stopper.join(10)
        run.delete()


def test_a_stage_that_ends_before_done_leaves_nothing_to_drain_to(
        kazoo_client, unique, broker, new_topic):
    run, producer, stage_over, stopper = _run(kazoo_client, unique, broker, new_topic)
    try:
        assert wait_for(lambda: producer.produced, 60.0)
        stage_over.set()
        stopper.join(10)
        assert not stopper.is_alive()
        assert run.get("produced") is None and drain_target(run, wait_s=0.0) is None
    finally:
        producer.stop()
        run.delete()
