#!/bin/sh
# Put the web app back to its initial state: stop it, restore the pristine database, restart,
# wait until /health answers. Used between rollouts that share a container.
set -e
[ -f /run/webapp.pid ] && kill "$(cat /run/webapp.pid)" 2>/dev/null || true
cp /srv/app/data/pristine.db /srv/app/data/app.db
rm -f /srv/app/data/app.db-journal /srv/app/data/app.db-wal
cd /srv/app && WEBAPP_DB=/srv/app/data/app.db PYTHONPATH=/opt/webkit \
    nohup /usr/bin/python3 /srv/app/app.py >/var/log/webapp/app.log 2>&1 &
echo $! > /run/webapp.pid
for _ in $(seq 100); do
    /usr/bin/python3 /opt/webkit/health.py 2>/dev/null && exit 0
    sleep 0.05
done
echo "reset: the app did not come back" >&2
exit 1
