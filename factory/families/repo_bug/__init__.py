"""The repo-bug family (real projects, planted bugs); importing the package registers it."""

from factory.families.repo_bug import family as family  # noqa: F401 - registers RepoBug
