"""The split-brain scenario rules, now at home in :mod:`zkconsumer.scenarios.splitbrain`.

A re-export for the Spark split-brain modules (``splitbrain``, ``splitbrain_real``,
``splitbrain_task``) and the integration test that still import them from here.
"""

from zkconsumer.scenarios.splitbrain import (
    PROTOCOLS,
    SCENARIOS,
    Action,
    Formation,
    Kind,
    Plan,
    ScenarioParams,
    formation_for,
    max_retries_for,
    member_name,
    not_applicable,
    parse_list,
    plan,
    task_of,
)

__all__ = ["PROTOCOLS", "SCENARIOS", "Action", "Formation", "Kind", "Plan", "ScenarioParams",
           "formation_for", "max_retries_for", "member_name", "not_applicable", "parse_list",
           "plan", "task_of"]
