"""Administration: topics, data and (later) group tools, on ZooKeeper and the broker."""

from zkconsumer.admin.cluster import bootstrap_servers, brokers, zk_session
from zkconsumer.admin.produce import ProduceError, produce
from zkconsumer.admin.topics import (
    PartitionInfo,
    TopicInfo,
    add_partitions,
    create_topic,
    describe_topic,
    list_topics,
)

__all__ = [
    "PartitionInfo", "ProduceError", "TopicInfo", "add_partitions", "bootstrap_servers",
    "brokers", "create_topic", "describe_topic", "list_topics", "produce", "zk_session",
]
