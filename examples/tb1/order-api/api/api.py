"""A tiny order service: GET /items, GET /orders, POST /orders (JSON). State in memory."""

import json
import os
import random
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

rng = random.Random(int(os.environ.get("CATALOGUE_SEED", "1")))
ITEMS = [
    {"sku": f"SKU-{n:03d}", "price": round(rng.uniform(1, 90), 2), "stock": rng.randint(3, 400)}
    for n in range(1, 13)
]
ORDERS = []
LOCK = threading.Lock()


class Handler(BaseHTTPRequestHandler):
    def _json(self, code, value):
        body = json.dumps(value).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        if self.path == "/items":
            return self._json(200, ITEMS)
        if self.path == "/orders":
            with LOCK:
                return self._json(200, list(ORDERS))
        return self._json(404, {"error": "not found"})

    def do_POST(self):
        if self.path != "/orders":
            return self._json(404, {"error": "not found"})
        length = int(self.headers.get("Content-Length") or 0)
        try:
            order = json.loads(self.rfile.read(min(length, 1 << 16)))
            sku, quantity = str(order["sku"]), int(order["quantity"])
        except (ValueError, KeyError, TypeError):
            return self._json(400, {"error": "expected {sku, quantity}"})
        if sku not in {item["sku"] for item in ITEMS} or quantity <= 0:
            return self._json(422, {"error": "unknown sku or bad quantity"})
        with LOCK:
            ORDERS.append({"sku": sku, "quantity": quantity})
        return self._json(201, {"ok": True})

    def log_message(self, *args):
        pass


ThreadingHTTPServer(("0.0.0.0", 8000), Handler).serve_forever()
