"""Print a ZooKeeper subtree with values, marking ephemeral znodes (the demo and operators)."""

from __future__ import annotations

from kazoo.client import KazooClient
from kazoo.exceptions import NoNodeError

from zkconsumer.zk import paths


def children_of(client: KazooClient, path: str) -> list[str]:
    """The children of ``path``; none if it does not exist (a group or topic not created yet)."""
    try:
        return list(client.get_children(path))
    except NoNodeError:
        return []


def tree_lines(client: KazooClient, root: str = "/", max_value: int = 100,
               max_children: int = 20) -> list[str]:
    """One line per znode, indented; values shortened; long child lists elided with a count."""
    lines: list[str] = []

    def walk(path: str, depth: int) -> None:
        try:
            data, stat = client.get(path)
            children = sorted(client.get_children(path), key=_natural)
        except NoNodeError:
            return
        name = path if depth == 0 else path.rsplit("/", 1)[1]
        value = (data or b"").decode("utf-8", errors="replace")
        if len(value) > max_value:
            value = value[: max_value - 3] + "..."
        mark = " (ephemeral)" if stat.ephemeralOwner else ""
        lines.append(f"{'  ' * depth}{name}{mark}" + (f" = {value}" if value else ""))
        for child in children[:max_children]:
            walk(paths.child(path, child), depth + 1)
        if len(children) > max_children:
            lines.append(f"{'  ' * (depth + 1)}... {len(children) - max_children} more")

    walk(root, 0)
    return lines


def _natural(name: str) -> tuple[int, int | str]:
    return (0, int(name)) if name.isdigit() else (1, name)


def group_tree(client: KazooClient, group: str) -> list[str]:
    return tree_lines(client, paths.group(group))
