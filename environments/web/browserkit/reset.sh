#!/bin/sh
# Browser mode: put the task back to its initial state between rollouts that share a container
# (run as root; installed as /opt/webkit/reset.sh too): the pristine database swapped in, the
# browser's cookies cleared and its page blank, and the app or the browser service restarted
# - the app behind its gate - when one no longer answers.
set -e
data=/srv/app/data
rm -f "$data/app.db.new" "$data/app.db-journal" "$data/app.db-wal" "$data/app.db-shm"
cp "$data/pristine.db" "$data/app.db.new"
chown webapp:webapp "$data/app.db.new"
chmod 0600 "$data/app.db.new"
mv -f "$data/app.db.new" "$data/app.db"
rm -f "$data/app.db-journal"
if ! /usr/bin/python3 /opt/webkit/health.py 2>/dev/null; then
    [ -f /run/webapp.pid ] && kill "$(cat /run/webapp.pid)" 2>/dev/null || true
    cd /srv/app && WEBAPP_DB=$data/app.db PYTHONPATH=/opt/webkit \
        nohup /usr/bin/python3 /opt/browserkit/gate.py --user webapp /srv/app/app.py \
        >>/var/log/webapp/app.log 2>&1 &
    echo $! > /run/webapp.pid
fi
if ! /usr/bin/python3 /opt/browserkit/browse.py reset >/dev/null 2>&1; then
    [ -f /run/browsed.pid ] && kill "$(cat /run/browsed.pid)" 2>/dev/null || true
    rm -f /run/browser/browse.sock
    cd / && nohup /usr/bin/python3 -I /opt/browserkit/browsed.py --user browser \
        --log /var/log/browser/chromium.log >>/var/log/browser/browsed.log 2>&1 &
    echo $! > /run/browsed.pid
fi
for _ in $(seq 200); do
    /usr/bin/python3 /opt/webkit/health.py 2>/dev/null && /usr/bin/python3 /opt/browserkit/browse.py ping >/dev/null 2>&1 && exit 0
    sleep 0.05
done
echo "reset: the app or the browser did not come back" >&2
exit 1
