"""schedkit: small helpers for working with time slots."""

from schedkit.intervals import free_slots, merge, total_length

__all__ = ["free_slots", "merge", "total_length"]
