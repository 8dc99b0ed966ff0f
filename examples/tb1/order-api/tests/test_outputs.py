import json
import urllib.request
from pathlib import Path


def fetch(path):
    return json.load(urllib.request.urlopen(f"http://api:8000{path}", timeout=10))


def test_report():
    items = fetch("/items")
    report = json.loads(Path("/app/report.json").read_text())
    expected = round(sum(item["price"] * item["stock"] for item in items), 2)
    assert abs(float(report["stock_value"]) - expected) < 0.005
    assert report["lowest_stock"] == min(items, key=lambda item: item["stock"])["sku"]


def test_order_placed_with_the_service():
    items = fetch("/items")
    lowest = min(items, key=lambda item: item["stock"])["sku"]
    assert fetch("/orders") == [{"sku": lowest, "quantity": 25}]
