"""The connection options every command spells the same way, Kafka's tools' names included.

``--zk`` and ``--bootstrap`` are this project's short names; Kafka's own tools (``kafka-topics``,
``ConsumerOffsetChecker``, ``kafka-consumer-groups``) say ``--zookeeper`` and
``--bootstrap-server``, so each option takes both and a command line copied from them works.
The one home of both options, here beside the tools, so the Spark jobs' parsers use it too.
"""

from __future__ import annotations

import argparse

ZK_FLAGS = ("--zk", "--zookeeper")
BOOTSTRAP_FLAGS = ("--bootstrap", "--bootstrap-server")
ZK_HELP = "ZooKeeper connect string HOST:PORT[,HOST:PORT...][/chroot]"
BOOTSTRAP_HELP = "Kafka bootstrap servers HOST:PORT[,HOST:PORT...]"


def _text(base: str, note: str | None) -> str:
    return f"{base}; {note}" if note else base


def add_zk_option(parser: argparse.ArgumentParser, *, dest: str = "zk", required: bool = True,
                  default: str | None = None, note: str | None = None) -> argparse.Action:
    """``--zk``/``--zookeeper`` into ``args.<dest>``; ``note`` follows the common help text."""
    return parser.add_argument(*ZK_FLAGS, dest=dest, required=required, default=default,
                               metavar="CONNECT", help=_text(ZK_HELP, note))


def add_bootstrap_option(parser: argparse.ArgumentParser, *, dest: str = "bootstrap",
                         required: bool = False, default: str | None = None,
                         note: str | None = None) -> argparse.Action:
    """``--bootstrap``/``--bootstrap-server`` into ``args.<dest>``."""
    return parser.add_argument(*BOOTSTRAP_FLAGS, dest=dest, required=required, default=default,
                               metavar="SERVERS", help=_text(BOOTSTRAP_HELP, note))
