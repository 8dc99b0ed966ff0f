#!/usr/bin/env python3
"""pngmeta.py set FILE KEYWORD TEXT: add a tEXt chunk (KEYWORD, TEXT) before IEND."""
import struct
import sys
import zlib

_, cmd, path, keyword, text = sys.argv
data = open(path, "rb").read()
body = keyword.encode("latin-1") + b"\0" + text.encode("latin-1")
chunk = struct.pack(">I", len(body)) + b"tEXt" + body
chunk += struct.pack(">I", zlib.crc32(b"tEXt" + body) & 0xFFFFFFFF)
end = data.rindex(b"IEND") - 4
open(path, "wb").write(data[:end] + chunk + data[end:])
