#!/bin/bash
set -euo pipefail
cd /srv/app
chown -R deploy:deploy /srv/app
find /srv/app -type d -exec chmod 750 {} +
find /srv/app -type f -exec chmod 640 {} +
find /srv/app/bin -maxdepth 1 -type f -name '*.sh' -exec chmod 750 {} +
find /srv/app/logs -maxdepth 1 -type f -name '*.log' -exec chmod 660 {} +
chmod 600 /srv/app/config/secrets.env
chmod 2770 /srv/app/logs
