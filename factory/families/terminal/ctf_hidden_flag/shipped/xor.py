#!/usr/bin/env python3
"""xor.py KEYFILE: XOR standard input with the key (the KEYFILE's content, surrounding
whitespace stripped), repeated as needed; write the result to standard output."""
import sys

key = open(sys.argv[1], "rb").read().strip()
data = sys.stdin.buffer.read()
sys.stdout.buffer.write(bytes(b ^ key[i % len(key)] for i, b in enumerate(data)))
