"""Reports: a sales dashboard whose report is drawn in the browser. The page is a shell with
filters (region, month, category); its script fetches the matching rows from ``/api/sales``
(JSON) and renders the table and its pager client-side, so nothing shows without JavaScript."""

from flask import jsonify, redirect, request
from kit import WebApp, esc

SCHEMA = """
CREATE TABLE products (
    id INTEGER PRIMARY KEY, name TEXT UNIQUE NOT NULL, category TEXT NOT NULL
);
CREATE TABLE sales (
    id INTEGER PRIMARY KEY, product_id INTEGER NOT NULL REFERENCES products(id),
    region TEXT NOT NULL, month TEXT NOT NULL, units INTEGER NOT NULL,
    revenue_cents INTEGER NOT NULL
);
"""

web = WebApp("Sales insights", schema=SCHEMA, nav=[("Report", "/report")])
app = web.app
PER_PAGE = 8

SCRIPT = """
const state = {rows: [], page: 0};
const money = (c) => '$' + (Math.floor(c / 100)).toLocaleString('en-US') + '.' + String(c % 100).padStart(2, '0');
function draw() {
  const body = document.getElementById('rows');
  body.replaceChildren();
  const pages = Math.max(1, Math.ceil(state.rows.length / PER_PAGE));
  state.page = Math.min(state.page, pages - 1);
  for (const r of state.rows.slice(state.page * PER_PAGE, (state.page + 1) * PER_PAGE)) {
    const tr = document.createElement('tr');
    for (const v of [r.product, r.category, r.region, String(r.units), money(r.revenue_cents)]) {
      const td = document.createElement('td'); td.textContent = v; tr.appendChild(td);
    }
    body.appendChild(tr);
  }
  document.getElementById('status').textContent =
    state.rows.length + ' rows - page ' + (state.page + 1) + ' of ' + pages;
  document.getElementById('prev').disabled = state.page === 0;
  document.getElementById('next').disabled = state.page >= pages - 1;
}
async function load() {
  const q = new URLSearchParams();
  for (const f of ['region', 'month', 'category']) q.set(f, document.getElementById(f).value);
  document.getElementById('status').textContent = 'Loading...';
  const reply = await fetch('/api/sales?' + q.toString());
  state.rows = reply.ok ? await reply.json() : [];
  state.page = 0;
  draw();
}
for (const f of ['region', 'month', 'category']) document.getElementById(f).addEventListener('change', load);
document.getElementById('prev').addEventListener('click', () => { state.page -= 1; draw(); });
document.getElementById('next').addEventListener('click', () => { state.page += 1; draw(); });
load();
"""


def _select(field: str, label: str, values: list[str], everything: str | None) -> str:
    options = ([f'<option value="">{everything}</option>'] if everything else []) + [
        f'<option value="{esc(v)}">{esc(v)}</option>' for v in values
    ]
    return f'<label for="{field}">{label}</label> <select id="{field}">{"".join(options)}</select> '


@app.route("/")
def home():
    return redirect("/report")


@app.route("/report")
@web.login_required
def report():
    def distinct(column: str, table: str = "sales") -> list[str]:
        rows = web.query(f"SELECT DISTINCT {column} AS v FROM {table} ORDER BY {column}")
        return [r["v"] for r in rows]

    months = distinct("month")
    body = (
        "<p>Sales by product. Choose the filters; the table shows the matching rows, sorted by "
        "product name.</p><noscript><p>This report needs JavaScript.</p></noscript><p>"
        + _select("region", "Region", distinct("region"), "All regions")
        + _select("month", "Month", months, None)
        + _select("category", "Category", distinct("category", "products"), "All categories")
        + '</p><p id="status" role="status"></p><table><thead><tr><th>Product</th>'
        "<th>Category</th><th>Region</th><th>Units</th><th>Revenue</th></tr></thead>"
        '<tbody id="rows"></tbody></table><p><button type="button" id="prev">Previous page'
        '</button> <button type="button" id="next">Next page</button></p>'
        f"<script>const PER_PAGE = {PER_PAGE};{SCRIPT}</script>"
    )
    return web.page("Sales report", body)


@app.route("/api/sales")
def sales():
    if web.current_user() is None:
        return jsonify({"error": "sign in first"}), 401
    sql = (
        "SELECT p.name AS product, p.category, s.region, s.units, s.revenue_cents "
        "FROM sales s JOIN products p ON p.id = s.product_id WHERE s.month = ?"
    )
    args = [request.args.get("month", "")]
    for field, column in (("region", "s.region"), ("category", "p.category")):
        if request.args.get(field):
            sql += f" AND {column} = ?"
            args.append(request.args[field])
    rows = web.query(sql + " ORDER BY p.name, s.region", tuple(args))
    return jsonify([dict(r) for r in rows])


if __name__ == "__main__":
    web.main()
