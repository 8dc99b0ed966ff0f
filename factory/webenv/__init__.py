"""Web environments: small stateful web apps that run inside the task container.

The files here are copied verbatim into every web task's ``environment/webkit/`` (and from
there to ``/opt/webkit`` in the image):

* :mod:`.kit` - what every app shares (Flask + sqlite): login with sessions, CSRF tokens on every
  form, pagination, flash messages, an audit trail of every change, seeding from JSON, /health.
* :mod:`.browser` - ``browse``, the agent's text browser: a page as text with numbered elements
  and the actions navigate, click, type, select, submit and back.
* ``entrypoint.sh`` - starts the app in the background, then runs the container's command.
* ``reset.sh`` - puts the app back to its pristine database (well under a second).

The kit imports Flask, which only the container has; the host never imports :mod:`.kit`.
"""
