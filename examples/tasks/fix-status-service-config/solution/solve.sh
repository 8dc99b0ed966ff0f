#!/bin/bash
set -euo pipefail
cat > /etc/statusd/statusd.ini <<'INI'
; statusd configuration
[server]
bind = 127.0.0.1
port = 9155
log_level = info

[service]
name = edge-status
message_file = /srv/statusd/motd.txt

[auth]
token_file = /etc/statusd/token
INI
