"""ZooKeeper plumbing: paths, codecs and the counted session wrapper."""
