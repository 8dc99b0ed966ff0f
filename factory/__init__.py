"""factory: manufacture verified, containerised training environments for LLM agents.

Importing this package is cheap (no Docker client, no torch): heavy modules load on use.
"""

__version__ = "0.1.0"
