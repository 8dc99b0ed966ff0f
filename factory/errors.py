"""Named exceptions. Each message says what went wrong *and* what the user can do about it.

The CLI catches :class:`FactoryError` and prints its one-line message; anything else is a bug.
"""

from __future__ import annotations

from pathlib import Path


class FactoryError(Exception):
    """Base class for every error the user can act on."""


class FileFieldError(FactoryError):
    """Base class: a file, or a field inside it, is at fault. ``path`` is the file, ``field``
    the dotted field (or row) inside it, or ``None`` when the whole file is; ``detail`` the
    message without the place, which the error's text puts first."""

    def __init__(self, path: Path | str, message: str, field: str | None = None) -> None:
        self.path = Path(path)
        self.field = field
        self.detail = message
        where = f"{self.path}" + (f": {field}" if field else "")
        super().__init__(f"{where}: {message}")


class TaskFormatError(FileFieldError):
    """A task directory (or one of its files) cannot be understood.

    ``path`` is the offending file, ``field`` the dotted field inside it (or ``None`` when the
    whole file is at fault, e.g. it is missing or not valid TOML).
    """


class UnsafeTaskFileError(TaskFormatError):
    """A task directory holds something factory must not follow or open: a symbolic link that
    leads outside the task, a FIFO, a socket or a device node."""


class OutputPathError(FactoryError):
    """An output folder (``--out``) cannot be used: it is a file, or cannot be created."""

    def __init__(self, path: Path | str, option: str, why: str) -> None:
        self.path = Path(path)
        super().__init__(f"{option} {path}: {why}")


class DockerUnavailableError(FactoryError):
    """The Docker engine cannot be reached."""

    def __init__(self, cause: str) -> None:
        super().__init__(
            f"cannot reach the Docker engine ({cause}); start it (scripts/setup.sh does) "
            "or set DOCKER_HOST"
        )


class BaseImageMissingError(FactoryError):
    """A Dockerfile's base image is neither local nor mapped to a local image by an alias."""

    def __init__(self, image: str, dockerfile: Path | str) -> None:
        self.image = image
        super().__init__(
            f"{dockerfile}: base image '{image}' is not available locally and images cannot be "
            "pulled here; run `factory images build`, or add an alias for it "
            "(environments/images/aliases.toml or FACTORY_IMAGE_ALIASES)"
        )


class ImageBuildError(FactoryError):
    """``docker build`` failed; ``log_tail`` holds the last lines of the build log."""

    def __init__(self, message: str, log_tail: str = "") -> None:
        self.log_tail = log_tail
        super().__init__(message)


class BuildLimitError(ImageBuildError):
    """A build step hit the build's memory or process limit (``limit``: 'memory' or 'pids');
    the build was stopped there."""

    def __init__(self, limit: str, message: str, log_tail: str = "") -> None:
        self.limit = limit
        super().__init__(message, log_tail)


class UnavailableOfflineError(FactoryError):
    """The task needs something that nothing reachable here provides: a toolchain version, a
    package its stand-in's Debian release lacks, or what its tests download (a Gradle
    distribution, crates, Go modules). ``missing`` names each thing."""

    def __init__(self, missing: list[str], where: Path | str) -> None:
        self.missing = list(missing)
        super().__init__(
            f"{where}: cannot be had offline here: {'; '.join(self.missing)} (vendor it into "
            "the task, or map it to a local image with an alias)"
        )


class ExecTimeoutError(FactoryError):
    """A command in a container ran past its timeout and was killed."""

    def __init__(self, what: str, timeout_sec: float) -> None:
        self.timeout_sec = timeout_sec
        super().__init__(f"{what} ran past its {timeout_sec:g}s timeout and was killed")


class ContainerDiedError(FactoryError):
    """The container stopped while we still needed it."""


class EnvironmentUnhealthyError(FactoryError):
    """The environment's healthcheck did not pass within its retries."""


class CancelledError(FactoryError):
    """The run is shutting down (Ctrl-C / SIGTERM); no new containers are started."""


class RecipeError(FactoryError):
    """A base-image recipe or the alias table is malformed."""


class BfclDataError(FactoryError):
    """The Berkeley Function Calling Leaderboard data (PyPI package ``bfcl-eval``) cannot be
    found or read; the message names what is missing and how to get it."""

    HINT = (
        "get it with `pip download bfcl-eval --no-deps -d ~/.cache/factory/wheels` and pass the "
        "wheel (or set FACTORY_BFCL_WHEEL to it), or install bfcl-eval"
    )

    def __init__(self, what: str) -> None:
        self.what = what
        super().__init__(f"{what}; {self.HINT}")


class TrainingError(FactoryError):
    """A training run cannot go on (no learning signal, every episode failing)."""


class TooFewTrialsError(FactoryError):
    """pass@k or pass^k asked of a task with fewer scored trials than k: the unbiased
    estimators need n >= k, and any figure for k > n would be a guess."""

    def __init__(self, n: int, k: int) -> None:
        self.n, self.k = n, k
        super().__init__(
            f"pass@{k}/pass^{k} need at least {k} scored trials, the task has {n}: run "
            f"more episodes (--k {k} or more) or ask for k <= {n}"
        )
