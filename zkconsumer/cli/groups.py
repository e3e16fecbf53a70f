"""``groups list|describe|verify|delete`` and ``offsets export|import|reset``."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from zkconsumer.admin.groups import describe_group, list_groups, verify_group
from zkconsumer.admin.migrate import (
    export_broker_offsets,
    import_broker_offsets,
    migrate_offsets,
)
from zkconsumer.admin.offset_checker import CheckerExit, check_offsets
from zkconsumer.admin.offset_tools import (
    delete_group,
    export_offsets,
    import_offsets,
    parse_lines,
    reset_offsets,
)
from zkconsumer.admin.options import add_zk_option


def register(sub: Any) -> None:
    groups = sub.add_parser("groups", help="inspect and verify consumer groups").add_subparsers(
        dest="groups_verb")
    groups.required = True
    lst = groups.add_parser("list", help="groups under /consumers")
    add_zk_option(lst)
    lst.set_defaults(func=groups_list)
    desc = groups.add_parser("describe", help="offsets, log size, lag and owner per partition "
                             "(the original ConsumerOffsetChecker's output)")
    add_zk_option(desc)
    desc.add_argument("--group", required=True, help="the group to describe")
    desc.add_argument("--topic", action="append", default=None,
                      help="comma-separated topics (default: those the group has owned)")
    desc.add_argument("--broker-info", action="store_true", help="list the brokers asked")
    desc.add_argument("--json", action="store_true",
                      help="one JSON object (problems on stderr) instead of the original's table")
    desc.add_argument("--offsets-storage", choices=("zookeeper", "kafka"), default="zookeeper",
                      help="kafka: the broker's offsets, ZooKeeper's where it has none")
    desc.set_defaults(func=groups_describe)
    ver = groups.add_parser("verify", help="exit 0 when every partition has one valid owner")
    add_zk_option(ver)
    ver.add_argument("--group", required=True, help="the group to verify")
    ver.add_argument("--json", action="store_true", help="the verdict as one JSON object")
    ver.set_defaults(func=groups_verify)
    dele = groups.add_parser("delete", help="remove an idle group's znodes")
    add_zk_option(dele)
    dele.add_argument("--group", required=True, help="the group to delete (no live member)")
    dele.set_defaults(func=groups_delete)
    sec = groups.add_parser("secure", help="set the ACL of ZKCONSUMER_ZK_AUTH/ZKCONSUMER_ZK_ACL "
                            "on a group created without one")
    add_zk_option(sec)
    sec.add_argument("--group", required=True, help="the group whose znodes get the ACL")
    sec.set_defaults(func=groups_secure)
    mig = groups.add_parser("migrate-offsets", help="copy a group's offsets between ZooKeeper "
                            "and the broker")
    add_zk_option(mig, note="the group's ZooKeeper; the broker comes from its registrations")
    mig.add_argument("--group", required=True, help="the group whose offsets move")
    mig.add_argument("--to", choices=("kafka", "zookeeper"), default="kafka",
                     help="where the offsets go (default: kafka)")
    mig.add_argument("--force", action="store_true", help="even while members are registered")
    mig.add_argument("--json", action="store_true", help="what was copied, as one JSON object")
    mig.set_defaults(func=groups_migrate_offsets)

    offsets = sub.add_parser("offsets", help="export, import, reset committed offsets"
                             ).add_subparsers(dest="offsets_verb")
    offsets.required = True
    exp = offsets.add_parser("export", help="write '<znode>:<offset>' lines")
    add_zk_option(exp)
    exp.add_argument("--group", action="append", default=None,
                     help="a group to export (repeatable; default: every group)")
    exp.add_argument("--output", required=True, help="file, or - for stdout")
    exp.add_argument("--offsets-storage", choices=("zookeeper", "kafka"), default="zookeeper",
                     help="read the offsets from ZooKeeper (default) or the broker")
    exp.set_defaults(func=offsets_export)
    imp = offsets.add_parser("import", help="write the offsets of an export file")
    add_zk_option(imp)
    imp.add_argument("--input", required=True, help="file, or - for stdin")
    imp.add_argument("--force", action="store_true", help="even while members are registered")
    imp.add_argument("--offsets-storage", choices=("zookeeper", "kafka"), default="zookeeper",
                     help="write the offsets to ZooKeeper (default) or the broker")
    imp.set_defaults(func=offsets_import)
    rst = offsets.add_parser("reset", help="set a topic's offsets to smallest, largest or N")
    add_zk_option(rst)
    rst.add_argument("--group", required=True, help="the group whose offsets are set")
    rst.add_argument("--topic", required=True, help="every partition of this topic")
    rst.add_argument("--to", required=True, help="smallest | largest | OFFSET")
    rst.add_argument("--force", action="store_true", help="even while members are registered")
    rst.set_defaults(func=offsets_reset)


def groups_list(args: argparse.Namespace) -> int:
    for group in list_groups(args.zk):
        print(group)
    return 0


def groups_describe(args: argparse.Namespace) -> int:
    topics = None if args.topic is None else [
        t for arg in args.topic for t in arg.split(",") if t]
    if args.json:
        desc = describe_group(args.zk, args.group, topics=topics, storage=args.offsets_storage)
        for problem in desc.problems:
            print(f"warning: {problem}", file=sys.stderr)
        print(json.dumps(desc.as_dict()))
        return 0
    try:
        report = check_offsets(args.zk, args.group, topics, storage=args.offsets_storage)
    except CheckerExit as exc:
        print(f"Exiting due to: {exc}.")
        return 1
    sys.stdout.write(report.text(broker_info=args.broker_info))
    return 0


def groups_verify(args: argparse.Namespace) -> int:
    result = verify_group(args.zk, args.group)
    if args.json:
        print(json.dumps(result.as_dict()))
    else:
        for v in result.violations:
            owner = f" (owner {v.owner})" if v.owner else ""
            print(f"{v.kind}: [{v.topic},{v.partition}]{owner}")
        print("Rebalance operation successful !" if result.ok
              else f"Rebalance operation failed ! {len(result.violations)} violation(s)")
    return 0 if result.ok else 1


def groups_delete(args: argparse.Namespace) -> int:
    delete_group(args.zk, args.group)
    print(f"deleted group {args.group}")
    return 0


def groups_migrate_offsets(args: argparse.Namespace) -> int:
    result = migrate_offsets(args.zk, args.group, to=args.to, force=args.force)
    if args.json:
        print(json.dumps(result.as_dict()))
        return 0
    for e in result.copied:
        print(f"{e.topic} {e.partition} {e.offset}")
    source = "ZooKeeper" if args.to == "kafka" else "the broker"
    target = "the broker" if args.to == "kafka" else "ZooKeeper"
    print(f"copied {len(result.copied)} offset(s) of group {args.group} from {source} to "
          f"{target}")
    return 0


def groups_secure(args: argparse.Namespace) -> int:
    from zkconsumer.admin.secure import secure_group

    report = secure_group(args.zk, args.group)
    print(f"secured {len(report.changed)} znode(s) of group {args.group} "
          f"({len(report.unchanged)} already secured)")
    return 0


def offsets_export(args: argparse.Namespace) -> int:
    entries = (export_broker_offsets(args.zk, args.group) if args.offsets_storage == "kafka"
               else export_offsets(args.zk, args.group))
    text = "".join(e.line() + "\n" for e in entries)
    if args.output == "-":
        sys.stdout.write(text)
    else:
        with open(args.output, "w", encoding="utf-8") as fh:
            fh.write(text)
        which = ", ".join(args.group) if args.group else "every group"
        print(f"exported {len(entries)} offsets of {which} to {args.output}")
    return 0


def offsets_import(args: argparse.Namespace) -> int:
    if args.input == "-":
        lines = sys.stdin.read().splitlines()
    else:
        with open(args.input, encoding="utf-8") as fh:
            lines = fh.read().splitlines()
    write = import_broker_offsets if args.offsets_storage == "kafka" else import_offsets
    n = write(args.zk, parse_lines(lines), force=args.force)
    print(f"imported {n} offsets")
    return 0


def offsets_reset(args: argparse.Namespace) -> int:
    try:
        entries = reset_offsets(args.zk, args.group, args.topic, args.to, force=args.force)
    except ValueError as exc:
        print(f"zkconsumer offsets reset: error: {exc}", file=sys.stderr)
        return 2
    for e in entries:
        print(f"updating partition {e.partition} with new offset: {e.offset}")
    print(f"updated the offset for {len(entries)} partitions")
    return 0
