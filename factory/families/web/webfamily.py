"""Web environments as procedural families: one family per app.

A web family ships a small app built on the shared webkit (``environments/web/webkit``: Flask +
sqlite, login, CSRF, pagination, audit trail) in ``environments/web/apps/<app>/app.py``,
draws the app's seed data and a goal from the seed, and checks the goal in the app's database.
The app starts with the container (entrypoint) and ``[environment.healthcheck]`` holds phases and
episodes until it answers. Tasks need several steps through the app: sign in, navigate, search,
page through lists, fill forms, recover from validation errors.

The app runs as its own user (``webapp``), whose data folder (the database and its audit trail)
the agent's user (``agent``) cannot enter: the agent can only change the data through the app.
A family may add cheat probes in ``templates/cheats/`` (e.g. forging a record straight into the
database) that certification runs and that must score 0.

**Observation modes** (``params: {observation: ...}``): ``text`` (the default) gives the agent
the app over HTTP, with the text browser ``browse`` or curl. ``browser`` is BrowserGym's view:
a headless Chromium (Debian's package, in the image) that the agent drives with ``browse``
(``environments/web/browserkit``) and sees as an accessibility tree with element ids, pages
running their JavaScript. In that mode the app answers only the browser: a key drawn at
container start, which only root, the app and the browser service can read, must come with
every request (``gate.py``), so curl or Python from the agent's shell get a refusal, and the
family's text-mode solution becomes a cheat probe that must score 0. A family opts in with
``observations`` and a browser-mode reference solution, ``browser/solve.sh.j2`` beside its
``templates/`` (a browser-only family keeps it as its ``solution/solve.sh.j2``).

The tests run in a separate verifier (Harbor's ``environment_mode = "separate"``): a collect
hook, run as root in the agent's container once the agent is done, copies the app's live
database with sqlite's backup API (a consistent copy even while the app holds it) into a
folder it creates afresh (:data:`SNAPSHOT_DIR`, which the agent's user cannot create), and only
that folder travels to the fresh container, where the tests read the copy
(``snapshot_db`` in the templates). A failed hook leaves no folder, so the tests fail.
"""

from __future__ import annotations

import json
import random
import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jinja2

from factory.families.base import SNAPSHOT_DIR, Draft, Family, fresh_folder_hook
from factory.resources import web_apps_dir, webkit_dir
from factory.templating import folder_environment, render
from factory.vocabulary import AGENT_USER, Difficulty, Domain

WEB_PORT = 8000
WEBENV_DIR = webkit_dir()
BROWSERKIT_DIR = WEBENV_DIR.parent / "browserkit"
_BROWSERKIT_FILES = (
    "axtree.py",
    "browse.py",
    "browsed.py",
    "cdp.py",
    "entrypoint.sh",
    "gate.py",
    "reset.py",
    "reset.sh",
)
TEXT, BROWSER = "text", "browser"
_KIT_FILES = ("kit.py", "browser.py", "client.py", "health.py", "entrypoint.sh", "reset.sh")
APP_DB = "/srv/app/data/app.db"
SNAPSHOT_DB = f"{SNAPSHOT_DIR}/app.db"
_BACKUP = (
    "import sqlite3, sys; "
    "src = sqlite3.connect('file:' + sys.argv[1] + '?mode=ro', uri=True, timeout=30); "
    "dst = sqlite3.connect(sys.argv[2]); src.backup(dst); dst.close(); src.close()"
)


def snapshot_hook(database: str = APP_DB, folder: str = SNAPSHOT_DIR) -> str:
    """The collect hook: ``database`` copied with sqlite's backup API into ``folder``/app.db,
    the folder replaced as a whole (:func:`~factory.families.base.fresh_folder_hook`).
    Python runs isolated (``-I``) from ``/``: nothing the agent put in its working directory
    or the environment is imported."""
    db = shlex.quote(database)
    return fresh_folder_hook(
        folder, f'cd / && /usr/bin/python3 -I -c "{_BACKUP}" {db} {{tmp}}/app.db'
    )


HEALTHCHECK = {
    "command": "python3 /opt/webkit/health.py",
    "interval_sec": 0.5,
    "timeout_sec": 30.0,  # one attempt; Harbor fails the trial when it runs out
    "retries": 20,
    "start_period_sec": 15.0,
}
BROWSER_HEALTHCHECK = {
    **HEALTHCHECK,
    "command": "python3 /opt/webkit/health.py && /usr/local/bin/browse ping",
    "retries": 60,  # Chromium starts in a few seconds, more on a busy machine
    "start_period_sec": 30.0,
}


@dataclass
class WebScenario:
    """What a web family decided for one task."""

    seed: dict[str, list[dict[str, Any]]]
    """Database rows by table (``users`` rows carry a plain ``password``)."""
    context: dict[str, Any]
    """Template variables (the goal, the account to use, the expected end state)."""
    near_misses: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Wrong solutions the tests must reject: name -> context overrides for the family's
    ``solution/solve.sh.j2`` (so each near miss is the reference solution with one slip)."""
    secrets: list[str] = field(default_factory=list)
    outputs: list[str] = field(default_factory=list)
    """Files the agent writes besides its changes to the app (an answer), for the tests."""
    tags: list[str] = field(default_factory=list)


class WebFamily(Family):
    """Base of web-app families: subclasses implement :meth:`scenario`. The app itself is
    ``environments/web/apps/<folder>/``, where <folder> is the family's folder name."""

    domain = Domain.WEB
    observations: tuple[str, ...] = (TEXT,)
    """The observation modes the family offers (``params: {observation: ...}``); the first
    is the default."""

    @classmethod
    def app_dir(cls) -> Path:
        """The family's app (container side): ``environments/web/apps/<family folder>/``."""
        return web_apps_dir() / cls.folder().name

    def scenario(self, rng: random.Random, difficulty: Difficulty) -> WebScenario:
        raise NotImplementedError

    def solve_template(self, observation: str) -> jinja2.Template:
        """The reference solution's template in ``observation`` mode: a browser-mode solution
        drives ``browse``; the near misses are renderings of it too."""
        if observation == BROWSER and (self.folder() / "browser" / "solve.sh.j2").is_file():
            return folder_environment(self.folder() / "browser").get_template("solve.sh.j2")
        return self.template("solution/solve.sh.j2")

    def draft(self, rng: random.Random, difficulty: Difficulty, params: Mapping[str, Any]) -> Draft:
        observation = params.get("observation", self.observations[0])
        if observation not in self.observations:
            raise ValueError(
                f"family {self.name} offers the observations {', '.join(self.observations)}, "
                f"not {observation!r}"
            )
        scenario = self.scenario(rng, difficulty)
        files = web_environment_files(scenario.seed)
        for path in sorted(p for p in self.app_dir().rglob("*") if p.is_file()):
            files[f"environment/app/{path.relative_to(self.app_dir()).as_posix()}"] = (
                path.read_bytes()
            )
        context = {
            **scenario.context,
            "port": WEB_PORT,
            "difficulty": difficulty.value,
            "snapshot_db": SNAPSHOT_DB,
            "observation": observation,
        }
        solve = self.solve_template(observation)
        mutations = {
            name: solve.render(**{**context, **overrides})
            for name, overrides in scenario.near_misses.items()
        }
        cheats: dict[str, str] = {}
        healthcheck, memory_mb, tags = HEALTHCHECK, 768, ["web", *scenario.tags]
        if observation == BROWSER:
            files.update(browserkit_files())
            files["environment/Dockerfile"] = render("families/_shared/dockerfile_web_browser.j2")
            files["solution/solve.sh"] = solve.render(**context)
            if TEXT in self.observations:
                # The text mode's solution talks HTTP from the shell: here it must get nowhere.
                cheats["http-behind-the-browser"] = self.solve_template(TEXT).render(**context)
            healthcheck, memory_mb, tags = BROWSER_HEALTHCHECK, 2048, [*tags, "browser"]
        return Draft(
            context=context,
            mutations=mutations,
            files=files,
            secrets=scenario.secrets,
            outputs=[APP_DB, *scenario.outputs],
            separate_verifier=True,
            artifacts=[SNAPSHOT_DIR],
            collect=[snapshot_hook()],
            collect_user="root",
            agent_user=AGENT_USER,  # the app runs as its own user (dockerfile_web.j2)
            healthcheck=dict(healthcheck),
            memory_mb=memory_mb,
            agent_timeout_sec=600.0 if observation == TEXT else 900.0,
            verifier_timeout_sec=60.0,
            tags=tags,
            cheats=cheats,
        )


def app_user(
    rng: random.Random, user_id: int, person: str, role: str, password_words: list[str]
) -> dict[str, Any]:
    """A seeded user of a web app: username from the first name, a word-and-number password."""
    return {
        "id": user_id,
        "username": person.split()[0].lower() + str(rng.randrange(10, 99)),
        "password": f"{rng.choice(password_words)}-{rng.randrange(1000, 9999)}",
        "display_name": person,
        "role": role,
    }


def browserkit_files() -> dict[str, str | bytes]:
    """The browser kit (headless Chromium's service, ``browse``, the app's gate), as a
    browser-mode task's environment/ holds it."""
    return {
        f"environment/browserkit/{name}": (BROWSERKIT_DIR / name).read_bytes()
        for name in _BROWSERKIT_FILES
    }


def web_environment_files(seed: Mapping[str, Any]) -> dict[str, str | bytes]:
    """The webkit files and the app's seed data, as a web task's environment/ holds them."""
    files: dict[str, str | bytes] = {
        f"environment/webkit/{name}": (WEBENV_DIR / name).read_bytes() for name in _KIT_FILES
    }
    files["environment/app/seed.json"] = json.dumps(seed, indent=1, sort_keys=True)
    return files
