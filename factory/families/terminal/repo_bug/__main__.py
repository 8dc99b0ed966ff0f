"""``python -m factory.families.repo_bug [PROJECT ...] [--limit N] [--bundle]``: screen
mutants of the repo-bug projects in containers (see ``screen``)."""

from factory.families.repo_bug.screen import main

raise SystemExit(main())
