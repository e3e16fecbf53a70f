"""Child processes that die with their parent, so that nothing outlives a killed runner."""

from __future__ import annotations

import ctypes
import signal

_PR_SET_PDEATHSIG = 1


def die_with_parent() -> None:  # pragma: no cover - runs in the child between fork and exec
    """Ask Linux to SIGKILL this process when its parent dies (``preexec_fn`` of a child).

    An orphaned server or member (the test run, the demo or the lab runner was killed) would
    otherwise keep its port and keep consuming. Elsewhere, or without libc, it does nothing.
    """
    try:
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    except OSError:
        pass
