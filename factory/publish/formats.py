"""The export formats (``factory export --format``), light to import: the CLI lists them."""

from __future__ import annotations

from enum import Enum


class ExportFormat(str, Enum):
    """``factory export --format``."""

    JSONL = "jsonl"
    """A JSONL index with hashes, next to the task directories."""
    HARBOR = "harbor"
    """A Harbor registry dataset."""
    HF = "hf"
    """A Hugging Face datasets parquet dataset with a dataset card."""
