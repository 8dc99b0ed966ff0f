#!/bin/bash
# Start the orders service.
set -euo pipefail
cd /srv/app
exec python3 lib/orders.py --config config/app.conf
