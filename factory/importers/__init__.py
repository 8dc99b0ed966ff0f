"""Importers that turn third-party benchmarks into factory tasks."""
