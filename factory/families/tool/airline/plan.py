"""The pieces of an airline request: each plants what it needs in the seeded state and adds
calls, words and near misses to the plan."""

from __future__ import annotations

import random

from factory.toolenv.core import JSON
from factory.toolenv.domains.airline import DOMAIN, fare_legs, new_reservation

from factory.families.names import FIRST_NAMES as FIRST
from factory.families.names import LAST_NAMES as LAST
from factory.families.tool.scenario import Call
from factory.families.tool.toolfamily import Plan, shift_date

from .data import (
    CABIN_WORDS,
    MINORS,
    RELATIONS,
    WORDINGS,
    dob_words,
    pretty_date,
    random_dob,
)
from .reservations import plant_reservation


class AirlinePlan(Plan):
    """The pieces of an airline request."""

    domain = DOMAIN
    wordings = WORDINGS

    def __init__(self, rng: random.Random, state: JSON, me: JSON) -> None:
        super().__init__(rng, state, me)
        self.used = {
            (leg["flight_number"], leg["date"])
            for r in state["reservations"]
            for leg in r["flights"]
        }
        self.city = {a["code"]: a["city"] for a in state["airports"]}

    # --- helpers -------------------------------------------------------------------------

    def _card(self) -> JSON:
        cards = [m for m in self.me["payment_methods"] if m["source"] == "credit_card"]
        return self.rng.choice(cards)

    def _card_words(self, card: JSON) -> str:
        return self.wording("card", brand=card["brand"], last_four=card["last_four"])

    def _future_flight(
        self,
        cabin: str,
        seats: int,
        *,
        days: tuple[int, int] = (1, 8),
        route: tuple[str, str] | None = None,
    ) -> JSON:
        today = self.state["today"]
        lo, hi = shift_date(today, days[0]), shift_date(today, days[1])
        # The customer's trips stay distinct, so "my trip from A to B on D" names one.
        trips = {
            (leg["origin"], leg["destination"], leg["date"])
            for r in self.state["reservations"]
            if r["user_id"] == self.me["user_id"]
            for leg in r["flights"]
        }
        pool = [
            f
            for f in self.state["flights"]
            if lo <= f["date"] <= hi
            and (f["flight_number"], f["date"]) not in self.used
            and (f["origin"], f["destination"], f["date"]) not in trips
            and (route is None or (f["origin"], f["destination"]) == route)
        ]
        flight = self.rng.choice(pool)
        self._take(flight, cabin, seats, 4)
        return flight

    def _take(self, flight: JSON, cabin: str, seats: int, spare: int) -> None:
        """Make ``flight`` bookable with room for ``seats`` (and up to ``spare`` more) in
        ``cabin``, and keep other pieces off it."""
        flight["status"] = "available"
        flight["seats"][cabin] = max(flight["seats"][cabin], seats + self.rng.randint(0, spare))
        self.used.add((flight["flight_number"], flight["date"]))

    def _past_flight(self, status: str) -> JSON:
        """A flight of the past no piece uses yet, now ``status`` (delayed, cancelled)."""
        pool = [
            f
            for f in self.state["flights"]
            if f["date"] < self.state["today"] and (f["flight_number"], f["date"]) not in self.used
        ]
        flight = self.rng.choice(pool)
        flight["status"] = status
        self.used.add((flight["flight_number"], flight["date"]))
        return flight

    def _passenger(self) -> JSON:
        """The customer as a passenger."""
        name = self.me["name"]
        return {
            "first_name": name["first_name"],
            "last_name": name["last_name"],
            "dob": self.me["dob"],
        }

    def _companions(self, count: int) -> list[tuple[str, JSON]]:
        out = []
        for relation in self.rng.sample(RELATIONS, count):
            adult = relation not in MINORS
            first = self.rng.choice([f for f in FIRST if f != self.me["name"]["first_name"]])
            last = (
                self.rng.choice(LAST)
                if relation in ("my colleague", "my friend", "my flatmate")
                else self.me["name"]["last_name"]
            )
            out.append(
                (
                    relation,
                    {"first_name": first, "last_name": last, "dob": random_dob(self.rng, adult)},
                )
            )
        return out

    def _existing(
        self,
        cabin: str,
        *,
        npax: int = 1,
        bags: int = 0,
        insurance: bool = False,
        hours_ago: int | None = None,
    ) -> JSON:
        flight = self._future_flight(cabin, npax)
        others = [p for _, p in self._companions(npax - 1)]
        me = self._passenger()
        hours = self.rng.randint(40, 500) if hours_ago is None else hours_ago
        return plant_reservation(
            self.rng,
            self.state,
            self.me,
            [flight],
            cabin,
            passengers=[me, *others],
            bags=bags,
            insurance=insurance,
            hours_ago=hours,
        )

    @staticmethod
    def _legs(reservation: JSON) -> list[JSON]:
        return [
            {"flight_number": f["flight_number"], "date": f["date"]} for f in reservation["flights"]
        ]

    @staticmethod
    def _update_flights(code: str, cabin: str, legs: list[JSON], card: JSON) -> Call:
        return Call(
            "update_reservation_flights",
            {
                "reservation_id": code,
                "cabin": cabin,
                "flights": legs,
                "payment_id": card["payment_id"],
            },
        )

    def _trip_words(self, reservation: JSON) -> str:
        leg = reservation["flights"][0]
        return (
            f"{self.city[leg['origin']]} to {self.city[leg['destination']]} on "
            f"{pretty_date(leg['date'])}"
        )

    # --- changes ---------------------------------------------------------------------------

    def book(self, round_trip: bool) -> None:
        rng, state = self.rng, self.state
        cabin = rng.choice(["economy", "economy", "business", "basic_economy"])
        companions = self._companions(rng.choice([0, 1, 1, 2]))
        me_flies = not companions or rng.random() < 0.8
        people = [self._passenger()] if me_flies else []
        people += [p for _, p in companions]
        target = self._future_flight(cabin, len(people), days=(1, 5))
        route = (target["origin"], target["destination"])
        same_day = [
            f
            for f in state["flights"]
            if (f["origin"], f["destination"]) == route and f["date"] == target["date"]
        ]
        others = [f for f in same_day if f is not target]
        pick = rng.choice(["time", "cheapest"] if others else ["time"])
        if pick == "cheapest":
            for other in others:
                if other["prices"][cabin] <= target["prices"][cabin]:
                    other["prices"][cabin] = target["prices"][cabin] + rng.randint(5, 60)
            which = f"the cheapest {CABIN_WORDS[cabin]} fare that day"
        else:
            which = self.wording("outbound", time=target["departure"])
        legs = [target]
        back = None
        if round_trip:
            back = self._future_flight(cabin, len(people), days=(6, 9), route=(route[1], route[0]))
            legs.append(back)
        bags = rng.randint(0, len(people) * 2)
        insurance = rng.random() < 0.5
        # what the server will charge for this booking (its own record, priced as it prices it)
        _, price = new_reservation(
            "", self.me, fare_legs(legs, cabin), cabin, people, bags, insurance, self.state["now"]
        )
        gift = next((m for m in self.me["payment_methods"] if m["source"] == "gift_card"), None)
        if gift is not None and rng.random() < 0.5:
            gift["balance"] = float(max(gift["balance"], price + rng.randrange(0, 300, 10)))
            payment, pay_words = gift, self.wording("gift-card")
        else:
            payment = self._card()
            pay_words = self._card_words(payment)
        self.calls += [
            Call("get_user_details", {"user_id": self.me["user_id"]}),
            Call("list_all_airports", {}),
            Call(
                "search_direct_flight",
                {"origin": route[0], "destination": route[1], "date": target["date"]},
            ),
        ]
        if back is not None:
            self.calls.append(
                Call(
                    "search_direct_flight",
                    {"origin": route[1], "destination": route[0], "date": back["date"]},
                )
            )
        book = Call(
            "book_reservation",
            {
                "user_id": self.me["user_id"],
                "flights": [{"flight_number": f["flight_number"], "date": f["date"]} for f in legs],
                "cabin": cabin,
                "passengers": people,
                "payment_id": payment["payment_id"],
                "total_baggages": bags,
                "insurance": insurance,
            },
        )
        self.calls.append(book)
        self.secrets += [f["flight_number"] for f in legs] + [payment["payment_id"]]
        who = (
            "me"
            if not companions
            else ("me and " if me_flies else "")
            + " and ".join(
                f"{rel} {p['first_name']} {p['last_name']} (born {dob_words(rng, p['dob'])})"
                for rel, p in companions
            )
        )
        trip = (
            f"from {self.city[route[0]]} to {self.city[route[1]]} on {pretty_date(target['date'])}"
        )
        if back is not None:
            ret = self.wording("return", time=back["departure"])
            trip += f", coming back on {pretty_date(back['date'])} with {ret}"
        bag_words = (
            "no checked bags"
            if bags == 0
            else f"{bags} checked bag{'s' if bags > 1 else ''} in total"
        )
        ins_words = "with travel insurance" if insurance else "no travel insurance, thanks"
        we = "I'll" if len(people) == 1 and me_flies else "we'll"
        self.parts.append(
            self.wording(
                "booking",
                kind="round trip" if back else "one-way trip",
                trip=trip,
                which=which,
                cabin=CABIN_WORDS[cabin],
                Cabin=CABIN_WORDS[cabin].capitalize(),
                who=who,
                We=we.capitalize(),
                bags=bag_words,
                insurance=ins_words,
                card=pay_words,
            )
        )
        wrong = [f for f in same_day if f is not target]
        if wrong:
            flights = [{"flight_number": wrong[0]["flight_number"], "date": target["date"]}]
            flights += book.arguments["flights"][1:]
            self.near["books-another-flight"] = [*self.calls[:-1], book.but(flights=flights)]
        self.near["flips-insurance"] = [*self.calls[:-1], book.but(insurance=not insurance)]
        self.tags.append("booking")

    def add_bags(self) -> None:
        rng = self.rng
        npax = rng.randint(1, 3)
        cabin = rng.choice(["economy", "business", "basic_economy"])
        bags = rng.randint(1, npax + 1)
        res = self._existing(cabin, npax=npax, bags=bags)
        more = rng.randint(1, 3)
        card = self._card()
        code = res["reservation_id"]
        calls = [
            Call("get_reservation_details", {"reservation_id": code}),
            Call("get_user_details", {"user_id": self.me["user_id"]}),
            Call(
                "update_reservation_baggages",
                {
                    "reservation_id": code,
                    "total_baggages": bags + more,
                    "payment_id": card["payment_id"],
                },
            ),
        ]
        self.change(calls, "sets-bags-to-added-count", calls[-1].but(total_baggages=more))
        self.secrets.append(card["payment_id"])
        bag = f"{more} more checked bag{'s' if more > 1 else ''}"
        self.say(
            "baggage",
            code=code,
            bag=bag,
            card=lambda: self._card_words(card),
            trip=self._trip_words(res),
        )

    def fix_passenger(self) -> None:
        rng = self.rng
        npax = rng.randint(2, 4)
        res = self._existing(
            rng.choice(["economy", "business", "basic_economy"]), npax=npax, bags=rng.randint(0, 2)
        )
        others = [
            p
            for p in res["passengers"]
            if (p["first_name"], p["last_name"])
            != (self.me["name"]["first_name"], self.me["name"]["last_name"])
        ]
        wrong = rng.choice(others)
        field = rng.choice(["first_name", "last_name", "dob"])
        if field == "dob":
            right = random_dob(rng, wrong["dob"] < "2005")
            while right == wrong["dob"]:
                right = random_dob(rng)
            what = (
                f"the date of birth of {wrong['first_name']} {wrong['last_name']} is wrong, "
                f"it should be {dob_words(rng, right)}"
            )
        else:
            pool = FIRST if field == "first_name" else LAST
            right = rng.choice([n for n in pool if n != wrong[field]])
            other_part = wrong["last_name" if field == "first_name" else "first_name"]
            what = (
                f"{wrong['first_name']} {wrong['last_name']}'s "
                f"{'first' if field == 'first_name' else 'last'} name is wrong - it should "
                f"be {right}"
                + (
                    f" ({right} {other_part})"
                    if field == "first_name"
                    else f" ({other_part} {right})"
                )
            )
        fixed = [dict(p, **{field: right}) if p is wrong else dict(p) for p in res["passengers"]]
        code = res["reservation_id"]
        calls = [
            Call("get_reservation_details", {"reservation_id": code}),
            Call("update_reservation_passengers", {"reservation_id": code, "passengers": fixed}),
        ]
        only = calls[-1].but(passengers=[dict(wrong, **{field: right})])
        self.change(calls, "keeps-only-the-fixed-passenger", only)
        self.say("passengers", code=code, what=what, trip=self._trip_words(res))

    def change_cabin(self) -> None:
        rng = self.rng
        old = rng.choice(["basic_economy", "economy"])
        new = "economy" if old == "basic_economy" and rng.random() < 0.5 else "business"
        npax = rng.randint(1, 2)
        res = self._existing(old, npax=npax, bags=rng.randint(0, 2))
        for leg in res["flights"]:
            flight = next(
                f
                for f in self.state["flights"]
                if (f["flight_number"], f["date"]) == (leg["flight_number"], leg["date"])
            )
            flight["seats"][new] = max(flight["seats"][new], npax + rng.randint(0, 3))
        card = self._card()
        code = res["reservation_id"]
        calls = [
            Call("get_reservation_details", {"reservation_id": code}),
            Call("get_user_details", {"user_id": self.me["user_id"]}),
            self._update_flights(code, new, self._legs(res), card),
        ]
        wrong_cabin = "business" if new == "economy" else "economy"
        self.change(calls, "wrong-cabin", calls[-1].but(cabin=wrong_cabin))
        self.secrets.append(card["payment_id"])
        self.say(
            "cabin-change",
            code=code,
            cabin=CABIN_WORDS[new],
            card=lambda: self._card_words(card),
            trip=self._trip_words(res),
            Card=lambda: self._card_words(card).capitalize(),
        )

    def change_flight(self) -> None:
        rng = self.rng
        cabin = rng.choice(["economy", "business"])
        npax = rng.randint(1, 2)
        res = self._existing(cabin, npax=npax, bags=rng.randint(0, 2))
        leg = res["flights"][0]
        route = (leg["origin"], leg["destination"])
        candidates = [
            f
            for f in self.state["flights"]
            if (f["origin"], f["destination"]) == route
            and f["date"] != leg["date"]
            and f["date"] > self.state["today"]
            and (f["flight_number"], f["date"]) not in self.used
        ]
        target = rng.choice(candidates)
        self._take(target, cabin, npax, 3)
        card = self._card()
        code = res["reservation_id"]
        new_legs = [{"flight_number": target["flight_number"], "date": target["date"]}]
        calls = [
            Call("get_reservation_details", {"reservation_id": code}),
            Call(
                "search_direct_flight",
                {"origin": route[0], "destination": route[1], "date": target["date"]},
            ),
            Call("get_user_details", {"user_id": self.me["user_id"]}),
            self._update_flights(code, cabin, new_legs, card),
        ]
        wrong = calls[-1].but(cabin="economy" if cabin == "business" else "business")
        self.change(calls, "moves-to-wrong-class", wrong)
        self.secrets += [target["flight_number"], card["payment_id"]]
        self.say(
            "flight-change",
            code=code,
            date=pretty_date(target["date"]),
            departure=target["departure"],
            card=lambda: self._card_words(card),
            cabin=CABIN_WORDS[cabin],
        )

    def cancel_fresh(self) -> None:
        rng = self.rng
        hour = int(self.state["now"][11:13])
        res = self._existing(
            rng.choice(["economy", "basic_economy"]),
            npax=rng.randint(1, 3),
            bags=rng.randint(0, 2),
            hours_ago=rng.randint(0, hour - 1),
        )
        older = self._existing(
            rng.choice(["economy", "basic_economy"]), hours_ago=rng.randint(50, 400)
        )
        code = res["reservation_id"]
        calls = [
            Call("get_user_details", {"user_id": self.me["user_id"]}),
            Call("get_reservation_details", {"reservation_id": older["reservation_id"]}),
            Call("get_reservation_details", {"reservation_id": code}),
            Call("cancel_reservation", {"reservation_id": code}),
        ]
        wrong = calls[-1].but(reservation_id=older["reservation_id"])
        self.change(calls, "cancels-the-other-trip", wrong, reads=2)
        self.secrets.append(code)
        self.say("cancellation", trip=self._trip_words(res))

    def compensate(self) -> None:
        rng = self.rng
        reason = rng.choice(["delayed", "cancelled"])
        flight = self._past_flight(reason)
        me = self._passenger()
        others = [p for _, p in self._companions(rng.randint(0, 2))]
        res = plant_reservation(
            rng,
            self.state,
            self.me,
            [flight],
            rng.choice(["economy", "basic_economy"]),
            passengers=[me, *others],
            hours_ago=rng.randint(200, 900),
        )
        code = res["reservation_id"]
        calls = [
            Call("get_reservation_details", {"reservation_id": code}),
            Call(
                "get_flight_status",
                {"flight_number": flight["flight_number"], "date": flight["date"]},
            ),
            Call(
                "send_certificate",
                {"user_id": self.me["user_id"], "reservation_id": code, "reason": reason},
            ),
        ]
        other = "cancelled" if reason == "delayed" else "delayed"
        self.change(calls, "wrong-compensation-reason", calls[-1].but(reason=other))
        words = "was delayed for hours" if reason == "delayed" else "was cancelled on us"
        self.say("compensation", code=code, date=pretty_date(flight["date"]), what=words)
