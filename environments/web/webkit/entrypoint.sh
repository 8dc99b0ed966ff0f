#!/bin/sh
# Start the task's web app (factory webkit) in the background, then run the container's command.
mkdir -p /var/log/webapp
cd /srv/app && WEBAPP_DB=/srv/app/data/app.db PYTHONPATH=/opt/webkit \
    nohup /usr/bin/python3 /srv/app/app.py >/var/log/webapp/app.log 2>&1 &
echo $! > /run/webapp.pid
[ "$#" -gt 0 ] || set -- sleep infinity
exec "$@"
