"""Web family: a blog / CMS (posts in draft, scheduled and published states, tags, editing,
editor-only publishing, a paginated comment moderation queue)."""

from __future__ import annotations

import random
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, field_validator

from factory.datafiles import load_toml_model
from factory.families.base import register
from factory.families.names import FIRST_NAMES as FIRST
from factory.families.names import LAST_NAMES as LAST
from factory.families.slots import Phrase, Slots
from factory.families.web.webfamily import WebFamily, WebScenario, app_user
from factory.vocabulary import Difficulty


class Vocabulary(BaseModel):
    """What the blog's seed data is drawn from (``words.toml``; a missing or unknown key
    fails at import, naming the file and the key)."""

    model_config = ConfigDict(extra="forbid")

    title_patterns: list[str]
    subjects: list[str]
    tags: list[str]
    new_tags: list[str]
    password_words: list[str]
    good_comments: list[str]
    spam_comments: list[str]
    spam_urls: list[str]
    people_domains: list[str]
    blocked_domains: list[str]


VOCAB = load_toml_model(Path(__file__).parent / "words.toml", Vocabulary, "blog word lists")


def _typo(title: str, rng: random.Random) -> str:
    words = title.split()
    index = max(range(len(words)), key=lambda i: (len(words[i]), i))
    word = words[index]
    for _ in range(20):
        i = rng.randrange(1, len(word) - 2)
        swapped = word[:i] + word[i + 1] + word[i] + word[i + 2 :]
        if swapped != word:
            words[index] = swapped
            return " ".join(words)
    words[index] = word[:-1]
    return " ".join(words)


class BlogSlots(Slots):
    """A blog about one theme: the subjects its posts are about (each post title is a
    pattern such as "Ten Tips for <subject>" or "<subject> in Practice")."""

    subjects: list[Phrase] = Field(
        min_length=8,
        max_length=10,
        description="subjects of the blog's posts, one to four capitalised words each",
        examples=[
            [
                "Harbour Tides",
                "Ferry Timetables",
                "Knot Tying",
                "Sail Repair",
                "Boat Painting",
                "Lighthouse History",
                "Coastal Birds",
                "Fish Smoking",
            ]
        ],
    )

    @field_validator("subjects")
    @classmethod
    def _apart(cls, value: list[str]) -> list[str]:
        texts = [*value, *(p.replace("{}", "") for p in VOCAB.title_patterns)]
        for subject in value:
            inside = [t for t in texts if t != subject and subject.lower() in t.lower()]
            if inside:
                raise ValueError(f"'{subject}' is part of '{inside[0]}'; choose distinct subjects")
        return value


@register
class WebBlog(WebFamily):
    """Run a blog's back office: easy fixes a draft's misspelt title and publishes it as an
    editor (the draft found by search or paging, a sibling draft on the same subject nearby);
    medium fixes the title of an author's own draft and its tags (remove a stray one, add two,
    one of them new), then has it published or scheduled with the separate editor account
    (authors cannot publish); hard moderates the whole paginated comment queue by a written
    rule (reject link spam and a blocked sender domain, approve the rest)."""

    name = "web-blog"
    title = "Edit, tag, publish posts and moderate comments in a blog CMS"
    category = "web-cms"
    slots = BlogSlots

    def scenario(self, rng: random.Random, difficulty: Difficulty) -> WebScenario:
        people = rng.sample([f"{f} {s}" for f in FIRST for s in LAST], 6)
        roles = ["admin", "editor", "editor", "author", "author", "author"]
        users = [
            app_user(rng, i + 1, p, role, VOCAB.password_words)
            for i, (p, role) in enumerate(zip(people, roles, strict=True))
        ]
        editor = users[rng.choice([1, 2])]
        author = users[rng.choice([3, 4, 5])]
        subjects = self.filled("subjects", VOCAB.subjects)
        titles = rng.sample([p.format(s) for p in VOCAB.title_patterns for s in subjects], 26)
        posts = []
        for i, title in enumerate(titles):
            status = rng.choice(["published", "published", "draft", "scheduled"])
            posts.append(
                {
                    "id": i + 1,
                    "title": title,
                    "author_id": rng.choice(users[1:])["id"],
                    "body": f"{title}. " + " ".join(rng.sample(VOCAB.good_comments, 2)),
                    "status": status,
                    "publish_at": f"2031-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"
                    if status == "scheduled"
                    else None,
                }
            )
        tags = [{"id": i + 1, "name": t} for i, t in enumerate(VOCAB.tags)]
        post_tags = []
        for post in posts:
            for tag_id in rng.sample(range(1, len(VOCAB.tags) + 1), rng.randint(1, 2)):
                post_tags.append({"post_id": post["id"], "tag_id": tag_id})
        # the target draft (and a sibling draft on the same subject, a plausible wrong pick)
        target = posts[rng.randrange(0, 8)]
        subject = next(s for s in subjects if s in target["title"])
        sibling_title = rng.choice(
            [p.format(subject) for p in VOCAB.title_patterns if p.format(subject) not in titles]
        )
        sibling = {
            "id": len(posts) + 1,
            "title": sibling_title,
            "author_id": author["id"],
            "body": f"{sibling_title}. Work in progress.",
            "status": "draft",
            "publish_at": None,
        }
        posts.append(sibling)
        post_tags.append(
            {"post_id": sibling["id"], "tag_id": rng.randrange(1, len(VOCAB.tags) + 1)}
        )
        new_title = target["title"]
        target.update(
            title=_typo(new_title, rng), status="draft", publish_at=None, author_id=author["id"]
        )
        target_tags = sorted(
            VOCAB.tags[r["tag_id"] - 1] for r in post_tags if r["post_id"] == target["id"]
        )
        blocked = rng.choice(VOCAB.blocked_domains)
        comments = self._comments(rng, posts, difficulty, blocked)
        context = {
            "mode": "moderate" if difficulty is Difficulty.HARD else "post",
            "editor": editor,
            "author": author,
            "post": {"id": target["id"], "old_title": target["title"], "body": target["body"]},
            "new_title": new_title,
            "sibling": {"id": sibling["id"], "title": sibling["title"], "body": sibling["body"]},
            "tags_add": [],
            "tags_remove": [],
            "final_tags": target_tags,
            "action": "publish",
            "publish_at": None,
            "blocked_domain": None,
            "decisions": [],
            "comments": {c["id"]: c["status"] for c in comments},
            "others": {
                p["id"]: [p["title"], p["status"]] for p in posts if p["id"] != target["id"]
            },
            # knobs the near misses turn
            "skip_title": False,
            "work_on": "target",
        }
        near: dict[str, dict] = {}
        if difficulty is Difficulty.EASY:
            near = {
                "title-not-fixed": {"skip_title": True},
                "not-published": {"action": None},
                "wrong-post": {"work_on": "sibling"},
            }
        elif difficulty is Difficulty.MEDIUM:
            stray = rng.choice([t for t in VOCAB.tags if t not in target_tags])
            post_tags.append({"post_id": target["id"], "tag_id": VOCAB.tags.index(stray) + 1})
            keep = target_tags
            add = [
                rng.choice([t for t in VOCAB.tags if t not in keep and t != stray]),
                rng.choice(VOCAB.new_tags),
            ]
            context.update(tags_add=add, tags_remove=[stray], final_tags=sorted(keep + add))
            near = {
                "stray-tag-kept": {"tags_remove": []},
                "missing-new-tag": {"tags_add": add[:1]},
                "title-not-fixed": {"skip_title": True},
            }
            if rng.random() < 0.5:
                day = f"2031-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"
                context.update(action="schedule", publish_at=day)
                near["published-not-scheduled"] = {"action": "publish"}
            else:
                near["left-as-draft"] = {"action": None}
        else:
            decisions = []
            for c in comments:
                if c["status"] != "pending":
                    continue
                spam = any(u in c["body"] for u in VOCAB.spam_urls)
                bad = spam or c["email"].endswith("@" + blocked)
                decisions.append([c["id"], "reject" if bad else "approve", c["kind"]])
            context.update(blocked_domain=blocked, decisions=decisions)
            expected = dict(context["comments"])
            for cid, decision, _ in decisions:
                expected[cid] = "approved" if decision == "approve" else "rejected"
            context["comments"] = expected

            def flip(kind: str) -> list:
                return [[i, "approve" if k == kind else d, k] for i, d, k in decisions]

            near = {
                "approves-links": {"decisions": flip("spam")},
                "approves-blocked-domain": {"decisions": flip("blocked")},
                "first-page-only": {"decisions": decisions[:5]},
                "rejects-everything": {"decisions": [[i, "reject", k] for i, _, k in decisions]},
            }
        for c in comments:
            c.pop("kind")
        seed = {
            "users": users,
            "posts": posts,
            "tags": tags,
            "post_tags": post_tags,
            "comments": comments,
        }
        tags_out = ["cms", "forms"] + (
            ["moderation", "pagination"] if difficulty is Difficulty.HARD else ["roles"]
        )
        return WebScenario(seed=seed, context=context, near_misses=near, tags=tags_out)

    @staticmethod
    def _comments(
        rng: random.Random, posts: list[dict], difficulty: Difficulty, blocked: str
    ) -> list[dict]:
        published = [p for p in posts if p["status"] == "published"] or posts
        n_pending = {Difficulty.EASY: 4, Difficulty.MEDIUM: 6}.get(difficulty, rng.randint(16, 22))
        kinds = ["good"] * n_pending
        if difficulty is Difficulty.HARD:
            n_spam, n_blocked = rng.randint(4, 6), rng.randint(3, 4)
            kinds = (
                ["spam"] * n_spam
                + ["blocked"] * n_blocked
                + ["good"] * (n_pending - n_spam - n_blocked)
            )
            rng.shuffle(kinds)
            # the first page must hold at least one of each, the later pages too
            while len(set(kinds[:5])) < 3 or len(set(kinds[5:])) < 3:
                rng.shuffle(kinds)
        comments = []
        for kind in ["old-approved"] * 5 + ["old-rejected"] * 2 + kinds:
            name = f"{rng.choice(FIRST)} {rng.choice(LAST)}"
            handle = name.split()[0].lower() + str(rng.randrange(1, 99))
            email = f"{handle}@{rng.choice(VOCAB.people_domains)}"
            body = rng.choice(VOCAB.good_comments)
            status = "pending"
            if kind == "spam":
                body = rng.choice(VOCAB.spam_comments).format(url=rng.choice(VOCAB.spam_urls))
            elif kind == "blocked":
                email = f"{handle}@{blocked}"
            elif kind == "old-approved":
                status = "approved"
            elif kind == "old-rejected":
                status = "rejected"
                body = rng.choice(VOCAB.spam_comments).format(url=rng.choice(VOCAB.spam_urls))
            comments.append(
                {
                    "id": len(comments) + 1,
                    "post_id": rng.choice(published)["id"],
                    "author_name": name,
                    "email": email,
                    "body": body,
                    "status": status,
                    "kind": kind,
                }
            )
        return comments
