"""``python -m factory.families.terminal.repo_bug [PROJECT ...] [--limit N] [--bundle]``: screen
mutants of the repo-bug projects in containers (see ``screen``)."""

from .screen import main

raise SystemExit(main())
