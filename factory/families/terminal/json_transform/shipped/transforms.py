"""The reference transformations of json-transform. Their source is embedded in the tasks (the
solution and the tests), so this module lives in ``shipped/`` and is never reformatted."""

def jt_report(inputs, spec, level, bug=""):
    """Reference of the `report` kind: inputs (file name -> text) -> outputs (file name -> text)."""
    import json
    import re

    t = spec["theme"]

    def dump(obj):
        if bug == "format":
            return json.dumps(obj, indent=4, sort_keys=True, ensure_ascii=False) + "\n"
        return json.dumps(obj, indent=2, sort_keys=True, ensure_ascii=False) + "\n"

    def total(rec):
        return sum(i[t["qty"]] * i[t["price"]] for i in rec.get(t["items"]) or [])

    def is_int(x, low):
        return type(x) is int and x >= low

    errors, records = [], []
    for name in sorted(inputs):
        for index, rec in enumerate(json.loads(inputs[name])):
            if level < 2:
                records.append((rec, name, index))
                continue
            rid = rec.get("id")
            items = rec.get(t["items"])
            if not (isinstance(rid, str) and re.fullmatch(re.escape(t["prefix"]) + "[0-9]+", rid)):
                err = "bad id"
            elif not is_int(rec.get("version"), 1):
                err = "bad version"
            elif rec.get("status") not in t["statuses"]:
                err = "bad status"
            elif not (
                isinstance(items, list)
                and items
                and all(
                    isinstance(i, dict)
                    and is_int(i.get(t["qty"]), 1)
                    and is_int(i.get(t["price"]), 0)
                    for i in items
                )
            ):
                err = "bad items"
            else:
                records.append((rec, name, index))
                continue
            errors.append(
                {
                    "file": name,
                    "index": index,
                    "id": rid if isinstance(rid, str) else None,
                    "error": err,
                }
            )
    if level == 2:
        best = {}
        for rec, name, index in records:
            key = rec["id"]
            rank = (rec["version"], name, index)
            if key not in best or (bug != "edge" and rank > best[key][0]):
                best[key] = (rank, rec)
        records = [(rec, "", 0) for _, rec in best.values()]
    recs = [rec for rec, _, _ in records]
    out = {}
    if level == 0:
        wanted = spec["status"]
        if bug == "edge":
            chosen = [r for r in recs if str(r.get("status", "")).lower() == wanted.lower()]
        else:
            chosen = [r for r in recs if r.get("status") == wanted]
        chosen.sort(key=lambda r: (-total(r), r["id"]))
        order = spec["key_order"] if bug != "format" else sorted(spec["key_order"])
        lines = []
        for r in chosen:
            values = {"id": r["id"], t["actor"]: r[t["actor"]]["name"], "total": total(r)}
            lines.append(json.dumps({k: values[k] for k in order}, ensure_ascii=False))
        out["selected.jsonl"] = "".join(line + "\n" for line in lines)
        return out
    groups = {}
    spend = {}
    for r in recs:
        if r.get("status") not in spec["statuses"]:
            continue
        region = (r.get(t["actor"]) or {}).get(t["region"])
        if region is None:
            if bug == "edge":
                continue
            region = "unknown"
        g = groups.setdefault(region, {"count": 0, "revenue": 0, "ids": []})
        g["count"] += 1
        g["revenue"] += total(r)
        g["ids"].append(r["id"])
        who = r[t["actor"]]["name"]
        spend.setdefault(region, {}).setdefault(who, 0)
        spend[region][who] += total(r)
    for region, g in groups.items():
        g["ids"].sort()
        g["top"] = min(spend[region].items(), key=lambda kv: (-kv[1], kv[0]))[0]
    out["summary.json"] = dump(groups)
    if level == 2:
        errors.sort(key=lambda e: (e["file"], e["index"]))
        out["errors.json"] = dump(errors)
    return out


def jt_merge(inputs, spec, level, bug=""):
    """Reference of the `merge` kind."""
    import json

    def merge(a, b, top=False):
        out = dict(a)
        for key, value in b.items():
            both_lists = isinstance(value, list) and isinstance(out.get(key), list)
            if value is None and level >= 1 and bug != "edge":
                out.pop(key, None)
            elif isinstance(value, dict) and isinstance(out.get(key), dict):
                out[key] = merge(out[key], value)
            elif top and level == 2 and key == spec["by_name"] and both_lists and bug != "edge":
                merged = [dict(x) for x in out[key]]
                for item in value:
                    match = next((m for m in merged if m.get("name") == item.get("name")), None)
                    if match is None:
                        merged.append(item)
                    else:
                        merged[merged.index(match)] = merge(match, item)
                out[key] = merged
            elif top and level == 2 and key == spec["union"] and both_lists:
                out[key] = list(out[key]) + [x for x in value if x not in out[key]]
            elif bug == "edge" and level == 0 and both_lists:
                out[key] = list(out[key]) + value
            else:
                out[key] = value
        return out

    result = {}
    for name in spec["order"]:
        result = merge(result, json.loads(inputs[name]), top=True)
    indent = 4 if bug == "format" else 2
    outputs = {
        spec["output"]: json.dumps(result, indent=indent, sort_keys=True, ensure_ascii=False) + "\n"
    }
    if level == 2:
        problems = []
        port = result.get("server", {}).get("port")
        if not (type(port) is int and 1 <= port <= 65535):
            problems.append(f"server.port: not an integer between 1 and 65535: {json.dumps(port)}")
        level_name = result.get("logging", {}).get("level")
        if level_name not in ("debug", "info", "warn", "error"):
            problems.append(f"logging.level: unknown level: {json.dumps(level_name)}")
        pool = result.get("database", {}).get("pool", {})
        if not (
            type(pool.get("min")) is int
            and type(pool.get("max")) is int
            and pool["min"] <= pool["max"]
        ):
            problems.append(
                f"database.pool: min must not exceed max: "
                f"{json.dumps(pool.get('min'))} > {json.dumps(pool.get('max'))}"
            )
        for i, up in enumerate(result.get(spec["by_name"], [])):
            if not (type(up.get("weight")) is int and up["weight"] >= 1):
                problems.append(
                    f"{spec['by_name']}.{i}.weight: not a positive integer: "
                    f"{json.dumps(up.get('weight'))}"
                )
        outputs["problems.json"] = json.dumps(sorted(problems), indent=indent) + "\n"
    return outputs


def jt_reshape(inputs, spec, level, bug=""):
    """Reference of the `reshape` kind."""
    import json

    indent = 4 if bug == "format" else 2
    if level == 0:
        flat = {}

        def walk(prefix, value):
            if isinstance(value, dict) and value:
                for k, v in value.items():
                    walk(f"{prefix}.{k}" if prefix else k, v)
            elif isinstance(value, list) and value and bug != "edge":
                for i, v in enumerate(value):
                    walk(f"{prefix}.{i}", v)
            else:
                flat[prefix] = value

        walk("", json.loads(inputs[spec["input"]]))
        return {
            "flat.json": json.dumps(flat, indent=indent, sort_keys=True, ensure_ascii=False) + "\n"
        }
    nodes, rejected = {}, []
    for number, line in enumerate(inputs[spec["input"]].split("\n"), 1):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except ValueError:
            rejected.append({"line": number, "reason": "invalid json"})
            continue
        if not isinstance(rec, dict) or type(rec.get("id")) is not int:
            rejected.append({"line": number, "reason": "bad id"})
            continue
        if not isinstance(rec.get("name"), str):
            rejected.append({"line": number, "reason": "bad name"})
            continue
        if bug == "edge" and level == 2 and rec["id"] in nodes:
            continue
        nodes[rec["id"]] = rec
    children = {}
    for rec in nodes.values():
        children.setdefault(rec.get("parent"), []).append(rec["id"])

    def build(nid):
        rec = nodes[nid]
        kids = sorted(children.get(nid, []))
        if bug == "edge" and level == 1:
            kids = children.get(nid, [])
        node = {"id": nid, "name": rec["name"]}
        built = [build(k) for k in kids]
        if level == 2:
            node["size"] = rec.get("size", 0)
            node["total"] = node["size"] + sum(b["total"] for b in built)
        node["children"] = built
        return node

    roots = sorted(i for i, rec in nodes.items() if rec.get("parent") not in nodes)
    out = {
        "tree.json": json.dumps([build(r) for r in roots], indent=indent, ensure_ascii=False) + "\n"
    }
    if level == 2:
        out["rejected.json"] = json.dumps(rejected, indent=indent) + "\n"
    return out
