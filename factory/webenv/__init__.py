"""The web-app kit, as the host sees it.

The kit (login, CSRF, pagination, audit trail, the ``browse`` text browser, entrypoint and reset
scripts) runs inside web task containers; its one source is ``environments/web/webkit/``
(copied into every web task as ``/opt/webkit``), and the apps built on it are
``environments/web/apps/<app>/``. This package only points its ``__path__`` at the kit, so the
host can import the stdlib-only modules (``factory.webenv.browser``) from those very files;
``kit.py`` imports Flask, which only the container has, and the host never imports it.
"""

from factory.resources import webkit_dir

__path__ = [str(webkit_dir())]
