#!/bin/sh
# Start the task's web app (factory webkit) in the background, then run the container's command.
# The app runs as the webapp user: its database (with the audit trail), session key and log are
# in folders only webapp and root can enter, so the agent's user can use the app but cannot
# write its data behind its back, stop it or reset it.
mkdir -p /var/log/webapp && chown webapp:webapp /var/log/webapp && chmod 0700 /var/log/webapp
cd /srv/app && WEBAPP_DB=/srv/app/data/app.db PYTHONPATH=/opt/webkit \
    nohup /usr/bin/python3 /srv/app/app.py --user webapp >/var/log/webapp/app.log 2>&1 &
echo $! > /run/webapp.pid
[ "$#" -gt 0 ] || set -- sleep infinity
exec "$@"
