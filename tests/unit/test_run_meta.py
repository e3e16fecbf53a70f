"""The versions an experiment verb records in meta.json, which the report shows per section."""

from __future__ import annotations

import argparse
import re
import socket

from zkconsumer import __version__
from zkconsumer.cli.run_meta import versions_of
from zkconsumer.testing.zookeeper import embedded_release, pyspark_jars_dir


def test_an_embedded_run_records_the_release_of_the_zookeeper_jar_it_runs() -> None:
    jar_releases = {p.stem.removeprefix("zookeeper-") for p in pyspark_jars_dir().glob(
        "zookeeper-[0-9]*.jar")}
    assert embedded_release() in jar_releases
    assert re.fullmatch(r"\d+\.\d+\.\d+", embedded_release())
    assert versions_of(argparse.Namespace(zookeeper=None)) == {
        "zkconsumer": __version__, "zookeeper": embedded_release()}


def test_a_zookeeper_that_does_not_answer_is_recorded_as_unknown_and_the_run_goes_on() -> None:
    with socket.socket() as s:  # a port nobody listens on: bound, never listening
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
        assert versions_of(argparse.Namespace(zookeeper=f"127.0.0.1:{port}")) == {
            "zkconsumer": __version__, "zookeeper": "unknown"}
