"""How benchmarks print a latency distribution, so every `make bench-*` line reads alike."""

from __future__ import annotations

import statistics


def latency(samples_s: list[float]) -> str:
    """p50 and p99 in milliseconds of latencies given in seconds, with the sample count."""
    if len(samples_s) < 2:
        return f"n/a (n={len(samples_s)})"
    cuts = statistics.quantiles(samples_s, n=100, method="inclusive")
    return f"p50 {cuts[49] * 1000:7.3f} ms   p99 {cuts[98] * 1000:7.3f} ms   (n={len(samples_s)})"
