#!/bin/sh
# Browser mode: put the task back to its initial state between rollouts that share a container
# (run as root; installed as /opt/webkit/reset.sh too). One interpreter does it all (reset.py):
# the browser reset over its service's socket (a new browser context: no cookies, storage,
# cache, history or page of the last episode), the pristine database swapped in, and the app
# checked behind its key gate - restarted behind it, or the browser service restarted, when one
# does not answer.
exec /usr/bin/python3 -I -S /opt/browserkit/reset.py "$@"
