import pandas as pd


def test_totals_match():
    sales = pd.read_csv("/data/sales.csv")
    want = sales.groupby("region")["amount"].sum().round(2).sort_index()
    got = pd.read_csv("/data/totals.csv")
    assert list(got.columns) == ["region", "total"]
    assert list(got["region"]) == list(want.index)
    for region, total in zip(got["region"], got["total"]):
        assert abs(total - want[region]) < 0.006, region
