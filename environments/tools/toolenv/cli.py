"""``tool``: the agent's shell client for the tool server in its container (stdlib only).

tool list                      names, descriptions and argument schemas
tool policy                    the policy document
tool call NAME '{"k": "v"}'    call a tool; prints the result as JSON (exit 1 on error)
"""

from __future__ import annotations

import json
import os
import sys
import urllib.error
import urllib.request

BASE = os.environ.get("TOOL_SERVER", "http://127.0.0.1:8000")


def request(path: str, body: object | None = None) -> dict:
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(
        BASE + path, data=data, headers={"Content-Type": "application/json"}
    )
    try:
        with urllib.request.urlopen(req, timeout=30) as response:
            return json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return json.loads(exc.read() or b"{}")
    except OSError as exc:
        sys.exit(f"tool: the tool server at {BASE} is not reachable ({exc})")


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if not args or args[0] in ("-h", "--help", "help"):
        print(__doc__.strip())
        return 0
    if args[0] == "list":
        for spec in request("/tools")["tools"]:
            fn = spec["function"]
            print(f"{fn['name']}: {fn['description']}")
            print(f"  arguments: {json.dumps(fn['parameters']['properties'], sort_keys=True)}")
        return 0
    if args[0] == "policy":
        print(request("/policy")["policy"])
        return 0
    if args[0] == "call" and len(args) in (2, 3):
        try:
            arguments = json.loads(args[2]) if len(args) == 3 else {}
        except json.JSONDecodeError as exc:
            print(f"tool: arguments are not valid JSON: {exc}", file=sys.stderr)
            return 2
        result = request("/call", {"name": args[1], "arguments": arguments})
        print(json.dumps(result.get("result") if result.get("ok") else result, indent=1))
        return 0 if result.get("ok") else 1
    print(__doc__.strip(), file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
