"""The data path: from the broker's fetch responses to the application's iterator.

One-way layers, each importing only those before it:

``records``
    ``MessageAndMetadata`` and the record builders (C when ``_speedups`` was compiled).
``position``
    ``PartitionTopicInfo``: fetched and consumed offsets of one owned partition.
``chunks``
    ``FetchedDataChunk`` and the bounded ``ChunkQueue`` between fetchers and streams.
``stream``
    ``KafkaStream`` and ``ConsumerIterator``, the application's side.

Beside them, ``partition_leaders`` (who leads each partition, read from ZooKeeper, and the
leader-finder thread: nothing to do with the leader coordination mode), ``fetcher_thread``
(one confluent-kafka client per broker) and ``fetcher`` (the manager that wires them).
"""
