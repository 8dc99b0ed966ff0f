"""Write a deterministic web server access log (combined log format) with a few noise lines."""
import random
from datetime import datetime, timedelta, timezone

rng = random.Random(20240517)
hot = ["203.0.113.7", "198.51.100.23", "192.0.2.144", "203.0.113.70", "198.51.100.5"]
ips = hot + [f"10.{rng.randint(0, 3)}.{rng.randint(0, 255)}.{rng.randint(1, 254)}" for _ in range(60)]
weights = [40, 33, 33, 21, 18] + [rng.randint(1, 6) for _ in range(60)]
paths = ["/", "/index.html", "/api/orders", "/api/orders/42", "/api/login", "/static/app.js",
         "/static/app.css", "/favicon.ico", "/admin", "/api/search?q=shoes"]
methods = ["GET"] * 8 + ["POST", "PUT", "DELETE"]
statuses = [200] * 30 + [304] * 5 + [301, 302] + [404] * 6 + [401, 403] + [500, 502, 503]
agents = ["Mozilla/5.0 (X11; Linux x86_64)", "curl/8.4.0", "python-requests/2.31",
          "Mozilla/5.0 (Macintosh; Intel Mac OS X 14_1)"]
t = datetime(2024, 5, 17, 6, 0, 0, tzinfo=timezone.utc)
lines = ["# log opened 2024-05-17T06:00:00Z"]
for i in range(2400):
    t += timedelta(seconds=rng.randint(0, 20))
    ip = rng.choices(ips, weights)[0]
    status = rng.choice(statuses)
    size = 0 if status in (304, 301, 302) else rng.randint(120, 48000)
    stamp = t.strftime("%d/%b/%Y:%H:%M:%S +0000")
    lines.append(
        f'{ip} - - [{stamp}] "{rng.choice(methods)} {rng.choice(paths)} HTTP/1.1" {status} {size} '
        f'"-" "{rng.choice(agents)}"'
    )
    if i in (600, 1500):
        lines.append("# log rotated by logrotate")
lines.append("# log closed")
with open("/var/log/webapp/access.log", "w") as fh:
    fh.write("\n".join(lines) + "\n")
