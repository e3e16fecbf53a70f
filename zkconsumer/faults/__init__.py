"""Fault injection between one client and a server: latency, pauses, blackholes, closed links."""

from zkconsumer.faults.proxy import Direction, FaultProxy

__all__ = ["Direction", "FaultProxy"]
