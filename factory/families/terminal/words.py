"""Word lists that several terminal families draw names from."""

from __future__ import annotations

APPS = [
    "ledger",
    "tidepool",
    "quarry",
    "lantern",
    "orchard",
    "beacon",
    "meridian",
    "cobalt",
    "juniper",
    "pebble",
    "foundry",
    "kestrel",
    "marlin",
    "sextant",
    "halyard",
    "bramble",
    "cinder",
    "drover",
    "ember",
    "garnet",
    "heron",
    "jasper",
    "lumen",
    "nimbus",
]
TEAMS = ["ops", "infra", "platform", "data", "billing", "search", "web", "etl", "payments", "sre"]
CTF_APPS = ["ledger", "beacon", "orchard", "quarry", "tidepool", "lantern", "sprocket", "meridian"]
