"""Named errors of export, import and report. Each names the file (and field) at fault."""

from __future__ import annotations

from pathlib import Path

from factory.errors import FactoryError, FileFieldError


class PublishError(FactoryError):
    """Base class: an export, import or report cannot go on."""


class ExportFileError(PublishError, FileFieldError):
    """A file of an export (index, registry entry, parquet, manifest) cannot be understood.

    ``path`` is the file, ``field`` the dotted field (or row) inside it, or ``None``.
    """


class UnknownFormatError(PublishError):
    """The source of an import is none of the formats, or --format names none of them."""


class IntegrityError(ExportFileError):
    """A task rebuilt from an export does not match the content hash the export recorded."""


class UnsafePathError(ExportFileError):
    """An entry of an export would write outside its task directory (absolute path, '..',
    or through a symbolic link)."""


class OutputExistsError(PublishError):
    """The output folder exists and is not empty (pass --force to replace it)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        super().__init__(f"{path}: exists and is not empty; pass --force to replace it")


class MissingDependencyError(PublishError):
    """An optional dependency (pyarrow for the hf format) is not installed."""

    def __init__(self, package: str, extra: str) -> None:
        super().__init__(
            f"the hf format needs {package}, which is not installed: "
            f"pip install -e '.[{extra}]' (or pip install {package})"
        )
