#!/bin/sh
# Before (the earlier revision) and after (this branch's), one after the other, under the lock;
# each from its own checkout with the C extension built by the same compiler command.
# BEFORE and AFTER name the two checkouts (revisions in throughput-before/meta.json and
# throughput/meta.json); one virtualenv runs both.
set -e
: "${BEFORE:?BEFORE: the earlier revision's checkout}" "${AFTER:?AFTER: this revision's checkout}"
cd "$AFTER"
PYTHONPATH="$BEFORE" .venv/bin/python benchmarks/throughput.py --messages 200000 --rounds 5 --compare-pure-python --results results/benchmarks/throughput-before
PYTHONPATH="$AFTER" .venv/bin/python benchmarks/throughput.py --messages 200000 --rounds 5 --compare-pure-python --results results/benchmarks/throughput
