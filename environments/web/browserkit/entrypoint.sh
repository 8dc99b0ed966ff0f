#!/bin/sh
# Browser-mode web task: start the app behind the browser key (gate.py, as webapp) and the
# browser service (browsed.py, as browser), then run the container's command. The key is
# drawn afresh for every container, in a file only root reads: both services read it before
# they leave root, so the agent's user can reach the app only through `browse`.
umask 077
mkdir -p /run/browserkey && chmod 0700 /run/browserkey
[ -s /run/browserkey/key ] || head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' > /run/browserkey/key
mkdir -p /var/log/webapp /var/log/browser /run/browser
chown webapp:webapp /var/log/webapp && chmod 0700 /var/log/webapp
chown browser:browser /var/log/browser /run/browser && chmod 0700 /var/log/browser && chmod 0755 /run/browser
cd /srv/app && WEBAPP_DB=/srv/app/data/app.db PYTHONPATH=/opt/webkit \
    nohup /usr/bin/python3 /opt/browserkit/gate.py --user webapp /srv/app/app.py \
    >/var/log/webapp/app.log 2>&1 &
echo $! > /run/webapp.pid
cd / && nohup /usr/bin/python3 -I /opt/browserkit/browsed.py --user browser \
    --log /var/log/browser/chromium.log >/var/log/browser/browsed.log 2>&1 &
echo $! > /run/browsed.pid
umask 022
[ "$#" -gt 0 ] || set -- sleep infinity
exec "$@"
