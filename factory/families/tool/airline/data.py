"""What an airline request is made of: names, places, prices, and how the request words dates
and people."""

from __future__ import annotations

import datetime
import random

AIRPORTS = [
    ("JFK", "New York"),
    ("LAX", "Los Angeles"),
    ("SFO", "San Francisco"),
    ("ORD", "Chicago"),
    ("SEA", "Seattle"),
    ("BOS", "Boston"),
    ("MIA", "Miami"),
    ("DEN", "Denver"),
    ("ATL", "Atlanta"),
    ("DFW", "Dallas"),
    ("PHX", "Phoenix"),
    ("LAS", "Las Vegas"),
    ("MSP", "Minneapolis"),
    ("DTW", "Detroit"),
    ("PDX", "Portland"),
    ("AUS", "Austin"),
]
TIMES = [
    "06:10",
    "07:25",
    "08:40",
    "10:05",
    "11:30",
    "12:55",
    "14:20",
    "15:45",
    "17:10",
    "18:35",
    "20:00",
    "21:15",
]
BRANDS = ["Visa", "Mastercard", "Amex"]
CABIN_WORDS = {"basic_economy": "basic economy", "economy": "economy", "business": "business"}
RELATIONS = [
    "my partner",
    "my friend",
    "my colleague",
    "my cousin",
    "my flatmate",
    "my sibling",
    "my kid",
    "my godchild",
]
MINORS = ("my kid", "my godchild")
CODE_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"


def pretty_date(date: str) -> str:
    day = datetime.date.fromisoformat(date)
    return f"{day.strftime('%A')}, {day.strftime('%B')} {day.day}"


def dob_words(rng: random.Random, dob: str) -> str:
    day = datetime.date.fromisoformat(dob)
    return rng.choice(
        [
            f"{day.strftime('%B')} {day.day}, {day.year}",
            f"{day.day} {day.strftime('%B')} {day.year}",
            dob,
        ]
    )


def random_dob(rng: random.Random, adult: bool = True) -> str:
    year = rng.randint(1950, 2003) if adult else rng.randint(2008, 2020)
    return datetime.date(year, rng.randint(1, 12), rng.randint(1, 28)).isoformat()
