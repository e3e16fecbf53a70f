#!/bin/sh
# Before (the earlier revision) and after (this branch's), one after the other, under the lock;
# each from its own checkout with the C extension built by the same compiler command.
set -e
cd /tmp/wt-after
PYTHONPATH=/tmp/wt-before /work/wt-perf/.venv/bin/python benchmarks/throughput.py --messages 200000 --rounds 5 --compare-pure-python --results /tmp/wall-before
PYTHONPATH=/tmp/wt-after /work/wt-perf/.venv/bin/python benchmarks/throughput.py --messages 200000 --rounds 5 --compare-pure-python --results /tmp/wall-after
