"""zkconsumer: Kafka's legacy ZooKeeper-coordinated consumer group, on kazoo."""

from zkconsumer.config import ConsumerConfig
from zkconsumer.connector import ZookeeperConsumerConnector
from zkconsumer.datapath.records import MessageAndMetadata
from zkconsumer.datapath.stream import KafkaStream
from zkconsumer.errors import ConsumerRebalanceFailedException, ConsumerTimeoutException
from zkconsumer.membership.rebalance_listener import (
    ConsumerRebalanceListener,
    RebalanceListenerBase,
)
from zkconsumer.topic_filter import Blacklist, Whitelist

__version__ = "0.1.0"

__all__ = [
    "Blacklist",
    "ConsumerConfig",
    "ConsumerRebalanceListener",
    "ConsumerRebalanceFailedException",
    "ConsumerTimeoutException",
    "KafkaStream",
    "MessageAndMetadata",
    "RebalanceListenerBase",
    "Whitelist",
    "ZookeeperConsumerConnector",
    "__version__",
]
