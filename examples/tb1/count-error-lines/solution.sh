#!/bin/bash
grep -c '\[ERROR\]' /app/logs/service.log > /app/error_count.txt
