"""ZooKeeper's own count of the requests of a window, from ``mntr``, with pings taken out.

The members count their requests themselves (the connector's per-operation counters); the
server is the independent witness. ``zk_packets_received`` counts every packet a client sent,
which besides the requests the members count includes:

* **pings**: kazoo pings a connection that has sent nothing for a third of the session timeout
  (any request resets that clock). Every session pings: the members', the broker registration's,
  the harness's. They are estimated, not counted: the rate is measured over a quiet window just
  before the event (the group settled, nobody rebalancing, so the packets are pings only) and
  ``rate x window`` is subtracted. Busy clients ping less than idle ones, so this slightly
  over-subtracts; with the herd's 30 s session timeout an idle client pings every ~10 s, so the
  whole correction is a fraction of a percent of a herd's requests.
* **session connect and close** packets (ConnectRequest, closeSession), which the members'
  counters do not count: the caller says how many sessions the event opened and closed.
* **the ``mntr`` commands themselves**: each is one received packet; between two snapshots the
  delta includes exactly one of them (measured: two back-to-back snapshots differ by 1).

Everything else in the window is a request: what the members' counters should add up to.

The server also counts the watch notifications it sends: each node event adds the number of
watchers it notified to ``zk_sum_node_{created,deleted,changed,children}_watch_count``, so the
delta of their sum is the notifications sent in the window (the clients' ``watch_fired`` records
must reach it once every notification was received).
"""

from __future__ import annotations

import contextlib
import logging
import time
from dataclasses import dataclass

from zkconsumer.testing.zookeeper import four_letter

log = logging.getLogger(__name__)

RECEIVED = "zk_packets_received"
SENT = "zk_packets_sent"
PACKETS_PER_MNTR = 1
WATCH_SUMS = tuple(f"zk_sum_node_{kind}_watch_count"
                   for kind in ("created", "deleted", "changed", "children"))


def parse_mntr(text: str) -> dict[str, float]:
    """The numeric lines of a ``mntr`` answer (``key<TAB>value``); text values are skipped."""
    out: dict[str, float] = {}
    for line in text.splitlines():
        key, _, value = line.partition("\t")
        with contextlib.suppress(ValueError):
            out[key.strip()] = float(value)
    return out


@dataclass(frozen=True)
class MntrSample:
    ts: float
    values: dict[str, float]

    def get(self, key: str) -> float:
        return self.values.get(key, 0.0)

    @property
    def watch_notifications(self) -> int:
        """Watch notifications the server has sent since it started."""
        return int(sum(self.get(k) for k in WATCH_SUMS))


def read_mntr(zk_connect: str, timeout: float = 5.0) -> MntrSample:
    """``mntr`` of the first server of ``zk_connect`` (the herd uses a single server)."""
    first = zk_connect.split(",")[0].split("/")[0]
    host, _, port = first.rpartition(":")
    text = four_letter(host, int(port), "mntr", timeout=timeout)
    values = parse_mntr(text)
    if RECEIVED not in values:
        raise RuntimeError(f"mntr on {first} has no {RECEIVED} (is mntr in "
                           f"4lw.commands.whitelist?): {text[:200]!r}")
    return MntrSample(time.time(), values)


@dataclass(frozen=True)
class PingRate:
    """Packets per second a quiet ZooKeeper received (pings of every open session)."""

    per_s: float
    window_s: float
    packets: int


def quiet_rate(before: MntrSample, after: MntrSample) -> PingRate:
    """The ping rate between two snapshots taken while nobody was making requests."""
    window = max(after.ts - before.ts, 1e-3)
    packets = int(after.get(RECEIVED) - before.get(RECEIVED)) - PACKETS_PER_MNTR
    return PingRate(max(packets, 0) / window, window, max(packets, 0))


def measure_ping_rate(zk_connect: str, window_s: float) -> PingRate:
    """Sample, wait ``window_s``, sample: the caller guarantees the window is quiet."""
    before = read_mntr(zk_connect)
    time.sleep(window_s)
    return quiet_rate(before, read_mntr(zk_connect))


@dataclass(frozen=True)
class ServerRequests:
    """The server's count of one window's requests and how it was derived."""

    packets_received: int
    packets_sent: int
    pings_estimated: float
    sessions_opened: int
    sessions_closed: int
    mntr_calls: int
    window_s: float
    requests: int
    watch_notifications: int

    def to_json(self) -> dict[str, float | int]:
        return {"packets_received": self.packets_received, "packets_sent": self.packets_sent,
                "pings_estimated": round(self.pings_estimated, 1),
                "sessions_opened": self.sessions_opened,
                "sessions_closed": self.sessions_closed, "mntr_calls": self.mntr_calls,
                "window_s": round(self.window_s, 3), "requests": self.requests,
                "watch_notifications": self.watch_notifications}


def server_requests(before: MntrSample, after: MntrSample, pings: PingRate,
                    sessions_opened: int = 0, sessions_closed: int = 0,
                    mntr_between: int = 0) -> ServerRequests:
    """``Δ packets received - mntr packets - connects - closes - ping rate x window``;
    ``mntr_between`` counts the ``mntr`` snapshots taken strictly between the two."""
    received = int(after.get(RECEIVED) - before.get(RECEIVED))
    sent = int(after.get(SENT) - before.get(SENT))
    window = after.ts - before.ts
    est_pings = pings.per_s * window
    mntr = PACKETS_PER_MNTR * (1 + mntr_between)
    requests = received - mntr - sessions_opened - sessions_closed - est_pings
    return ServerRequests(received, sent, est_pings, sessions_opened, sessions_closed,
                          1 + mntr_between, window, max(round(requests), 0),
                          after.watch_notifications - before.watch_notifications)


def relative_difference(client: int | None, server: int | None) -> float | None:
    """``|server - client| / client``: how far the two witnesses disagree (None: no basis)."""
    if client is None or server is None or client <= 0:
        return None
    return abs(server - client) / client
