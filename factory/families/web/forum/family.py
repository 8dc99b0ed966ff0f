"""Web family: a discussion forum (boards, threads, posts; member and moderator roles)."""

from __future__ import annotations

import datetime
import random

from factory.families.base import register
from factory.families.names import FIRST_NAMES as FIRST
from factory.families.names import LAST_NAMES as LAST
from factory.families.web.webfamily import WebFamily, WebScenario, app_user
from factory.vocabulary import Difficulty

WORDS = ["amber", "birch", "cedar", "delta", "ember", "fjord", "glade", "heron", "islet", "jasper"]
BOARDS = {
    "General": "Talk about anything to do with the hobby",
    "Marketplace": "Buy, sell and swap gear",
    "Help & Support": "Stuck? Ask here",
    "Showcase": "Show off your finished builds",
    "Off-topic": "Everything else",
    "Announcements": "News from the forum team",
    "Repairs": "Fixing broken things",
}
SUBJECTS = [
    "band saw",
    "router table",
    "workbench vise",
    "dust collector",
    "chisel set",
    "drill press",
    "hand plane",
    "spray booth",
    "lathe chuck",
    "sanding block",
    "bench grinder",
    "dovetail jig",
    "shop vacuum",
    "miter gauge",
    "table saw fence",
    "glue press",
    "oil finish",
    "wood stove",
    "bandsaw blade",
    "scroll saw",
    "clamp rack",
    "tool chest",
    "shellac flakes",
    "marking gauge",
    "spokeshave",
]
PATTERNS = [
    "Question about the {s}",
    "{S} keeps jamming",
    "Best {s} for beginners?",
    "My {s} restoration",
    "{S}: tips wanted",
    "Anyone tried a cheap {s}?",
    "Trouble with my {s}",
    "{S} recommendations",
    "Upgrading the {s}",
    "Cleaning an old {s}",
]
SENTENCES = [
    "I have been at this for a week now.",
    "Any pointers are welcome.",
    "Photos are in my gallery.",
    "The manual says nothing about it.",
    "It worked fine until last month.",
    "I bought it second hand.",
    "Thanks in advance for any help.",
    "Same here, I never found a fix.",
    "Try checking the alignment first.",
    "Mine did that when the belt was loose.",
    "Good luck with the project!",
    "I would replace the bearings.",
    "That looks great, well done.",
    "Which brand did you go with?",
    "A bit of wax on the table helps a lot.",
    "Watch out for the cheap clones.",
]
REPLIES = [
    "Thanks, the belt tension fix worked for me as well.",
    "I can confirm this: it took me about {n} minutes with a new blade.",
    "Agreed - I measured {n} mm of play on mine too.",
    "Same result here after {n} hours of testing.",
    "This saved my weekend, thank you. Mine is model {n} as well.",
    "I tried this on my {n}-year-old machine and it still works.",
]
EDITS = [
    "Update: solved it by replacing the {s}. Thanks everyone!",
    "Update: the {s} was fine, the fuse had blown. Sorted now.",
    "Edit: I sold the old {s} and bought a new one, so this is resolved.",
    "Update: the shop replaced the {s} under warranty. Closing the loop here.",
]
START = datetime.date(2023, 3, 1)


def _day(n: int) -> str:
    return (START + datetime.timedelta(days=n)).isoformat()


def _listing(threads: list[dict]) -> list[dict]:
    """Board order as the app shows it: pinned first, then latest activity."""
    return sorted(threads, key=lambda t: (t["pinned"], t["last"], t["id"]), reverse=True)


@register
class WebForum(WebFamily):
    """Run errands on a forum: sign in, find threads by browsing paginated boards or searching,
    moderate them, reply quoting someone, edit a post. Easy: as a moderator, lock one named
    thread (a thread with the same title sits in another board) and pin another. Medium: lock
    every thread of a board whose last post is older than a date (spread over pages) and reply
    in a thread quoting a particular post. Hard: two accounts - the user's member account must
    edit their own post and post a quoting reply, while moving threads needs the moderator
    account (the member gets 403; a moderator could edit the post, but it must be the member)."""

    name = "web-forum"
    title = "Moderate and post on a web forum with the right account"
    category = "web-community"

    def scenario(self, rng: random.Random, difficulty: Difficulty) -> WebScenario:
        people = rng.sample([f"{f} {s}" for f in FIRST for s in LAST], 10)
        users = []
        for i, person in enumerate(people):
            role = "moderator" if i == 0 else "admin" if i == 2 else "member"
            users.append(app_user(rng, i + 1, person, role, WORDS))
        mod, me = users[0], users[1]
        others = users[3:]
        names = [
            "General",
            "Marketplace",
            *rng.sample([b for b in BOARDS if b not in ("General", "Marketplace")], 3),
        ]
        rng.shuffle(names)
        boards = [{"id": i + 1, "name": n, "description": BOARDS[n]} for i, n in enumerate(names)]
        by_name = {b["name"]: b for b in boards}
        general, market = by_name["General"], by_name["Marketplace"]
        titles = [p.format(s=s, S=s[0].upper() + s[1:]) for p in PATTERNS for s in SUBJECTS]
        rng.shuffle(titles)
        subjects = rng.sample(SUBJECTS, len(SUBJECTS))
        threads: list[dict] = []
        posts: list[dict] = []

        def add_thread(
            board: dict, title: str, n_posts: int | None = None, authors: list[dict] | None = None
        ) -> dict:
            n_posts = n_posts or rng.randint(1, 4)
            authors = authors or [rng.choice(users) for _ in range(n_posts)]
            start = rng.randrange(0, 330)
            days = sorted(rng.sample(range(start, start + 60), n_posts))
            thread = {
                "id": len(threads) + 1,
                "board_id": board["id"],
                "title": title,
                "author_id": authors[0]["id"],
                "locked": 0,
                "pinned": 0,
                "last": _day(days[-1]),
            }
            threads.append(thread)
            for author, day in zip(authors, days, strict=True):
                posts.append(
                    {
                        "id": len(posts) + 1,
                        "thread_id": thread["id"],
                        "author_id": author["id"],
                        "created": _day(day),
                        "body": " ".join(rng.sample(SENTENCES, 2)),
                    }
                )
            return thread

        big = (
            general
            if difficulty is Difficulty.HARD
            else rng.choice([b for b in boards if b is not general and b is not market] + [general])
        )
        for board in boards:
            for _ in range(rng.randint(15, 20) if board is big else rng.randint(4, 7)):
                add_thread(board, titles.pop())
        for board in boards:  # a few threads already pinned or locked
            mine = [t for t in threads if t["board_id"] == board["id"]]
            rng.choice(mine)["pinned"] = 1
            rng.choice(mine)["locked"] = rng.random() < 0.6

        def quoted_reply(avoid: dict, who: str) -> tuple[dict, dict, dict, dict]:
            """A reply step (as ``who``) that quotes post 6 (on page 2) of a new 7-post thread in
            a board other than ``avoid``, whose author also wrote post 2; with that post 2 (the
            wrong quote), the reply's words for the instruction and the thread's board."""
            board = rng.choice([b for b in boards if b is not avoid])
            quoted = rng.choice(others)
            authors = [rng.choice(others) for _ in range(7)]
            authors[1] = authors[5] = quoted
            thread = add_thread(board, titles.pop(), 7, authors)
            mine = [p for p in posts if p["thread_id"] == thread["id"]]
            post, other = mine[5], mine[1]
            text = rng.choice(REPLIES).format(n=rng.randint(3, 40))
            step = {"as": who, "op": "reply", "thread": thread["id"], "quote": post["id"]}
            words = {
                "reply_board": board["name"],
                "reply_title": thread["title"],
                "quoted": quoted,
                "quoted_date": post["created"],
                "reply_text": text,
            }
            return {**step, "text": text}, other, words, board

        def posted(by: dict, step: dict) -> dict:
            """The reply ``step`` as the tests expect to find it, written by ``by``."""
            return {"by": by["username"], **{k: step[k] for k in ("thread", "quote", "text")}}

        steps: list[dict] = []
        near: dict[str, dict] = {}
        ctx: dict = {"mod": mod, "me": None, "boards": {b["id"]: b["name"] for b in boards}}
        reply = edit = None
        if difficulty is Difficulty.EASY:
            pool = [
                t
                for t in threads
                if t["board_id"] == big["id"] and not t["pinned"] and not t["locked"]
            ]
            order = _listing(pool)
            lock_t = rng.choice(order[:-3])
            pin_t = rng.choice(order[len(order) // 2 :])
            if pin_t is lock_t:
                pin_t = order[-1]
            twin_board = rng.choice([b for b in boards if b is not big])
            twin = add_thread(twin_board, lock_t["title"])
            steps = [
                {"as": "mod", "op": "lock", "thread": lock_t["id"]},
                {"as": "mod", "op": "pin", "thread": pin_t["id"]},
            ]
            near = {
                "locks-twin-in-other-board": {
                    "steps": [{"as": "mod", "op": "lock", "thread": twin["id"]}, steps[1]]
                },
                "forgets-pin": {"steps": steps[:1]},
                "swaps-lock-and-pin": {
                    "steps": [
                        {"as": "mod", "op": "pin", "thread": lock_t["id"]},
                        {"as": "mod", "op": "lock", "thread": pin_t["id"]},
                    ]
                },
            }
            ctx.update(
                board=big["name"],
                lock_title=lock_t["title"],
                pin_title=pin_t["title"],
                twin_board=twin_board["name"],
            )
        elif difficulty is Difficulty.MEDIUM:
            mine = [t for t in threads if t["board_id"] == big["id"]]
            ordered = sorted(mine, key=lambda t: (t["last"], t["id"]))
            k = rng.randint(4, min(7, len(ordered) - 4))
            cutoff = ordered[k]["last"]
            ordered[k]["locked"] = 0
            stale = [t for t in mine if t["last"] < cutoff]
            for t in stale[:2]:
                t["locked"] = 0  # at least two that need locking
            targets = [t for t in _listing(stale) if not t["locked"]]
            edge = [t for t in mine if t["last"] == cutoff and not t["locked"]]
            reply, q_other, words, _ = quoted_reply(big, "mod")
            lock_steps = [{"as": "mod", "op": "lock", "thread": t["id"]} for t in targets]
            steps = [*lock_steps, reply]
            near = {
                "misses-last-stale-thread": {"steps": [*lock_steps[:-1], reply]},
                "locks-thread-on-cutoff-day": {
                    "steps": [
                        *lock_steps,
                        {"as": "mod", "op": "lock", "thread": edge[0]["id"]},
                        reply,
                    ]
                },
                "quotes-wrong-post": {"steps": [*lock_steps, {**reply, "quote": q_other["id"]}]},
                "reply-without-quote": {"steps": [*lock_steps, {**reply, "quote": None}]},
            }
            ctx.update(board=big["name"], cutoff=cutoff, **words)
            reply = posted(mod, reply)
        else:
            ctx["me"] = me
            # threads for sale in General go to Marketplace; "[Wanted]" ones stay
            pool = [t for t in threads if t["board_id"] == general["id"]]
            picks = rng.sample(pool, 6)
            for t, subject in zip(picks, subjects[:6], strict=True):
                prefix = "[For sale]" if t in picks[:4] else "[Wanted]"
                t["title"] = f"{prefix} {subject[0].upper() + subject[1:]}"
            targets = _listing(picks[:4])
            reply, _, words, board_q = quoted_reply(general, "me")
            e_thread = add_thread(
                rng.choice([b for b in boards if b is not board_q]),
                titles.pop(),
                4,
                [me, rng.choice(others), me, rng.choice(others)],
            )
            e_posts = [p for p in posts if p["thread_id"] == e_thread["id"]]
            e_target, e_other = (
                (e_posts[0], e_posts[2]) if rng.random() < 0.5 else (e_posts[2], e_posts[0])
            )
            e_other["body"] = " ".join(rng.sample(SENTENCES, 2))
            while e_other["body"] == e_target["body"]:
                e_other["body"] = " ".join(rng.sample(SENTENCES, 2))
            new_body = rng.choice(EDITS).format(s=rng.choice(SUBJECTS))
            moves = [
                {"as": "mod", "op": "move", "thread": t["id"], "board": market["id"]}
                for t in targets
            ]
            edit_step = {"as": "me", "op": "edit", "post": e_target["id"], "text": new_body}
            steps = [edit_step, reply, *moves]
            near = {
                "moderates-with-member-account": {
                    "steps": [edit_step, reply, *[{**m, "as": "me"} for m in moves]]
                },
                "replies-as-moderator": {"steps": [edit_step, {**reply, "as": "mod"}, *moves]},
                "edits-as-moderator": {"steps": [{**edit_step, "as": "mod"}, reply, *moves]},
                "edits-other-own-post": {
                    "steps": [{**edit_step, "post": e_other["id"]}, reply, *moves]
                },
                "moves-wanted-thread-too": {
                    "steps": [
                        edit_step,
                        reply,
                        *moves,
                        {
                            "as": "mod",
                            "op": "move",
                            "thread": picks[4]["id"],
                            "board": market["id"],
                        },
                    ]
                },
                "misses-one-for-sale-thread": {"steps": [edit_step, reply, *moves[:-1]]},
            }
            ctx.update(
                **words,
                edit_title=e_thread["title"],
                edit_old=e_target["body"],
                edit_date=e_target["created"],
                edit_new=new_body,
            )
            reply = posted(me, reply)
            edit = {"by": me["username"], "post": e_target["id"], "body": new_body}
        for t in threads:
            t["locked"] = int(t["locked"])
        expected = {t["id"]: [t["board_id"], t["locked"], t["pinned"]] for t in threads}
        for step in steps:
            if step["op"] == "lock":
                expected[step["thread"]][1] = 1
            elif step["op"] == "pin":
                expected[step["thread"]][2] = 1
            elif step["op"] == "move":
                expected[step["thread"]][0] = step["board"]
        ctx.update(
            steps=steps,
            strict=True,
            expected=expected,
            reply=reply,
            edit=edit,
            max_post=len(posts),
            moderator=mod["username"],
            changed=sorted(
                t
                for t, v in expected.items()
                if v
                != [threads[t - 1]["board_id"], threads[t - 1]["locked"], threads[t - 1]["pinned"]]
            ),
        )
        for overrides in near.values():
            overrides["strict"] = False
        seed = {
            "users": users,
            "boards": boards,
            "threads": [{k: v for k, v in t.items() if k != "last"} for t in threads],
            "posts": posts,
        }
        tags = ["forum", "moderation", "forms"] + (
            ["roles"] if difficulty is Difficulty.HARD else []
        )
        return WebScenario(seed=seed, context=ctx, near_misses=near, tags=tags)
