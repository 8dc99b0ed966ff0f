#!/bin/bash
tr 'A-Z' 'a-z' < /app/corpus.txt | tr -cs 'a-z' '\n' | grep -v '^$' | sort | uniq -c \
  | awk '{print $2, $1}' | sort -k2,2nr -k1,1 | head -5 > /app/top5.txt
