#!/bin/bash
# Stop the orders service.
pkill -f "lib/orders.py" || true
