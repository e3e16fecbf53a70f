"""zkconsumer: Kafka's legacy ZooKeeper-coordinated consumer group, on kazoo."""

__version__ = "0.1.0"
