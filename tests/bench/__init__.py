"""Bench tier: the benchmarks' harness (the quality bench, the smoke and scale runs); figures are
reported by the benchmarks, never asserted here."""
