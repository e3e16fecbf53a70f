"""Every option of every verb explains itself, and the connection options take Kafka's spellings.

Kafka's own tools say ``--zookeeper`` and ``--bootstrap-server``; wherever a verb takes ``--zk``
or ``--bootstrap`` it takes those too, so a command line copied from Kafka's tools works here.
The walk covers every subcommand, however deep (argparse keeps its actions in ``_actions``: it
has no public way to list them).
"""

from __future__ import annotations

import argparse
from collections.abc import Iterator

import pytest

from zkconsumer.admin.options import BOOTSTRAP_FLAGS, ZK_FLAGS
from zkconsumer.cli.main import build_parser


def commands(parser: argparse.ArgumentParser, path: str = "zkconsumer"
             ) -> Iterator[tuple[str, argparse.ArgumentParser]]:
    """``(command line, parser)`` of ``parser`` and each of its subcommands, recursively."""
    yield path, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from commands(sub, f"{path} {name}")


def options(parser: argparse.ArgumentParser) -> list[argparse.Action]:
    return [a for a in parser._actions if a.option_strings]


COMMANDS = dict(commands(build_parser()))


def test_the_walk_reaches_nested_subcommands():
    assert {"zkconsumer groups describe", "zkconsumer offsets reset", "zkconsumer broker start",
            "zkconsumer experiment herd", "zkconsumer topics create"} <= set(COMMANDS)


def test_every_option_of_every_command_has_help():
    missing = [f"{path}: {'/'.join(a.option_strings)}" for path, parser in COMMANDS.items()
               for a in options(parser) if not a.help or a.help == argparse.SUPPRESS]
    assert missing == []


@pytest.mark.parametrize(("short", "flags"), [("--zk", ZK_FLAGS),
                                              ("--bootstrap", BOOTSTRAP_FLAGS)])
def test_connection_options_take_kafkas_spellings_too(short, flags):
    found = [(path, a) for path, parser in COMMANDS.items() for a in options(parser)
             if short in a.option_strings]
    assert found, f"no command takes {short}"
    wrong = [f"{path}: {a.option_strings}" for path, a in found
             if tuple(a.option_strings) != flags]
    assert wrong == []
    # and no command spells Kafka's name without the short one
    long_only = [path for path, parser in COMMANDS.items() for a in options(parser)
                 if flags[1] in a.option_strings and short not in a.option_strings]
    assert long_only == []


def test_no_help_page_prints_an_escaped_percent_sign():
    """argparse expands ``%%`` in option help but prints a description as written."""
    doubled = [path for path, parser in COMMANDS.items() if "%%" in parser.format_help()]
    assert doubled == []
