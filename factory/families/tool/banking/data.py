"""What a banking request is made of: names, places, prices, and how the request words dates
and people."""

from __future__ import annotations

import datetime

BANKS = [
    "First Harbor Bank",
    "Summit Credit Union",
    "Lakeside Savings",
    "Pioneer Trust",
    "Redwood National",
    "Bayview Bank",
]
COMPANIES = [
    "Riverside Property Management",
    "City Water Utility",
    "Northside Dental",
    "Brightpath Tutoring",
    "Oakmont HOA",
    "Metro Power & Light",
    "Evergreen Insurance",
    "Summit Auto Repair",
]
MERCHANTS = [
    "Streamflix",
    "GreenGrocer Market",
    "CityFuel",
    "Bookhaven",
    "SkyRail Tickets",
    "PixelPlay Store",
    "Corner Cafe",
    "FitLife Gym",
    "HomeWare Depot",
    "TechNest Online",
    "Urban Threads",
    "PetPals Supplies",
    "QuickRide",
    "Sunset Pharmacy",
]


def pretty_date(date: str) -> str:
    day = datetime.date.fromisoformat(date)
    return f"{day.strftime('%B')} {day.day}"


def money_text(amount: float) -> str:
    return f"${amount:,.2f}".replace(".00", "")
