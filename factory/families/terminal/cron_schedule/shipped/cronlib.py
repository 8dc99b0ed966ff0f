import datetime
import re

CRON_MONTHS = {n: i for i, n in enumerate("jan feb mar apr may jun jul aug sep oct nov dec".split(), 1)}
CRON_DAYS = {n: i for i, n in enumerate("sun mon tue wed thu fri sat".split())}
CRON_MACROS = {
    "@yearly": "0 0 1 1 *",
    "@annually": "0 0 1 1 *",
    "@monthly": "0 0 1 * *",
    "@weekly": "0 0 * * 0",
    "@daily": "0 0 * * *",
    "@midnight": "0 0 * * *",
    "@hourly": "0 * * * *",
}
CRON_START = datetime.date(2027, 1, 1)
CRON_DAYS_SPAN = 731  # 2027 and the leap year 2028


def cron_field(text, lo, hi, names=None):
    """The set of values a cron field matches (Vixie cron / cronie syntax)."""
    values = set()

    def number(token):
        token = token.lower()
        if names and token in names:
            return names[token]
        if not token.isdigit():
            raise ValueError(f"bad value {token!r}")
        return int(token)

    for part in text.split(","):
        step = 1
        if "/" in part:
            part, step_text = part.split("/", 1)
            if not step_text.isdigit() or int(step_text) < 1:
                raise ValueError(f"bad step in {text!r}")
            step = int(step_text)
        if part == "*":
            start, end = lo, hi
        elif "-" in part:
            a, b = part.split("-", 1)
            start, end = number(a), number(b)
        else:
            start = number(part)
            end = hi if step > 1 else start
        if not (lo <= start <= hi and lo <= end <= hi) or start > end:
            raise ValueError(f"out of range: {text!r}")
        values.update(range(start, end + 1, step))
    return values


def cron_fires(expr):
    """Minutes (as integers from CRON_START) at which a 5-field expression fires."""
    expr = CRON_MACROS.get(expr.strip(), expr)
    fields = expr.split()
    if len(fields) != 5:
        raise ValueError(f"need 5 fields: {expr!r}")
    minutes = cron_field(fields[0], 0, 59)
    hours = cron_field(fields[1], 0, 23)
    doms = cron_field(fields[2], 1, 31)
    months = cron_field(fields[3], 1, 12, CRON_MONTHS)
    dows = {d % 7 for d in cron_field(fields[4], 0, 7, CRON_DAYS)}
    dom_star, dow_star = fields[2].startswith("*"), fields[4].startswith("*")
    times = sorted(h * 60 + m for h in hours for m in minutes)
    fires = set()
    for offset in range(CRON_DAYS_SPAN):
        day = CRON_START + datetime.timedelta(days=offset)
        if day.month not in months:
            continue
        dom_ok, dow_ok = day.day in doms, (day.isoweekday() % 7) in dows
        if (dom_ok and dow_ok) if (dom_star or dow_star) else (dom_ok or dow_ok):
            base = offset * 1440
            fires.update(base + t for t in times)
    return fires


def cron_show(minute):
    moment = datetime.datetime.combine(CRON_START, datetime.time()) + datetime.timedelta(minutes=minute)
    return moment.strftime("%a %Y-%m-%d %H:%M")


def cron_command(text):
    """Cron's treatment of '%': the command is the text before the first unescaped '%'
    (backslash-percent stands for a literal '%'); what follows becomes standard input."""
    out, i = "", 0
    while i < len(text):
        if text[i] == "\\" and text[i + 1 : i + 2] == "%":
            out += "%"
            i += 2
            continue
        if text[i] == "%":
            return out, text[i + 1 :].replace("%", "\n") + "\n"
        out += text[i]
        i += 1
    return out, ""


ENV_LINE = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*?)\s*$")


def parse_crontab(text, system):
    """Entries of a crontab (system=True: /etc/cron.d format with a user field). Each entry
    carries the environment set by the lines above it. A last line without a newline is
    ignored, as cron does."""
    lines = text.split("\n")
    lines = lines[:-1]  # the text after the last newline (empty when the file ends properly)
    env, entries, errors = {}, [], []
    for number, line in enumerate(lines, 1):
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        match = ENV_LINE.match(line)
        if match and not stripped.startswith("@"):
            value = match.group(2)
            if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
                value = value[1:-1]
            env[match.group(1)] = value
            continue
        if stripped.startswith("@"):
            parts = stripped.split(None, 2 if system else 1)
            schedule, rest = parts[0], parts[1:]
            if schedule not in CRON_MACROS:
                errors.append(f"line {number}: unsupported {schedule}")
                continue
        else:
            parts = stripped.split(None, 6 if system else 5)
            schedule, rest = " ".join(parts[:5]), parts[5:]
        if len(rest) != (2 if system else 1):
            errors.append(f"line {number}: incomplete entry")
            continue
        try:
            fires = cron_fires(schedule)
        except ValueError as exc:
            errors.append(f"line {number}: {exc}")
            continue
        entries.append(
            {
                "line": number,
                "schedule": schedule,
                "user": rest[0] if system else None,
                "command": rest[-1],
                "env": dict(env),
                "fires": fires,
            }
        )
    return entries, errors
