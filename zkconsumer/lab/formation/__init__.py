"""Formation and the storm under a retry budget, with member processes of either kind.

A group of N member processes started together, original 0.10.2 members (JVMs) or zkconsumer
members, under ``rebalance.max.retries`` = b: does it form (every initial member survives its
first rebalance and the group once shows every partition owned), and after a storm of joins and
clean leaves, does some member give up and is the group left stuck? The verdicts follow the
split-brain jobs' rules (:mod:`zkconsumer.results.exclusions`), so the rows stand beside
``results/splitbrain/real-v6-formation-*``, which measured zkconsumer members in threads.

``run.py`` runs one cell's repetition, ``verdict.py`` holds the pure rules and the tally,
``sweep.py`` walks kinds x budgets x sizes x seeds and writes ``runs.json``.
"""
