#!/bin/sh
# Put the web app back to its initial state between rollouts that share a container (run as
# root): the pristine database is swapped in atomically while the app keeps running (it opens
# the database for every request); the app is restarted only when it no longer answers.
set -e
data=/srv/app/data
rm -f "$data/app.db.new" "$data/app.db-journal" "$data/app.db-wal" "$data/app.db-shm"
cp "$data/pristine.db" "$data/app.db.new"
chown webapp:webapp "$data/app.db.new"
chmod 0600 "$data/app.db.new"
mv -f "$data/app.db.new" "$data/app.db"
rm -f "$data/app.db-journal"
/usr/bin/python3 /opt/webkit/health.py 2>/dev/null && exit 0
# The app is gone or hung: start it again.
[ -f /run/webapp.pid ] && kill "$(cat /run/webapp.pid)" 2>/dev/null || true
cd /srv/app && WEBAPP_DB=$data/app.db PYTHONPATH=/opt/webkit \
    nohup /usr/bin/python3 /srv/app/app.py --user webapp >/var/log/webapp/app.log 2>&1 &
echo $! > /run/webapp.pid
for _ in $(seq 100); do
    /usr/bin/python3 /opt/webkit/health.py 2>/dev/null && exit 0
    sleep 0.05
done
echo "reset: the app did not come back" >&2
exit 1
