"""End to end (issue 29): a memory captured through REST with an offset keeps it, and the worker resolves
its relative dates against the day in that offset, never the wall clock and not UTC. The memory still
answers with captured_at in UTC, as before."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta, timezone

from tests.integration.conftest import auth

LIMA = timezone(timedelta(hours=-5))


def _valid_at(http, memory_id: str) -> tuple[str, datetime]:
    """The memory's captured_at as answered, and the valid_at of its one fact."""
    detail = http.get(f"/v1/memories/{memory_id}", headers=auth()).json()
    (fact,) = detail["facts"]
    edge = http.get(f"/v1/facts/{fact['uuid']}", headers=auth()).json()
    return detail["captured_at"], datetime.fromisoformat(edge["edge"]["valid_at"])


def test_tomorrow_said_late_in_lima_is_the_next_day_there(http, drain) -> None:
    said = "Ravi is flying to Lisbon tomorrow."
    lima = http.post("/v1/memories", json={"content": said, "captured_at": "2024-03-14T23:30:00-05:00"}, headers=auth())
    episode = http.post("/v1/episodes", json={"content": "Mina is flying to Oslo tomorrow.",
                                              "captured_at": "2024-03-14T23:30:00-05:00"}, headers=auth())
    # The control: the same instant said in UTC, where it is already 15 March (its own group: the same triple
    # in one namespace would be one fact)
    utc = http.post("/v1/memories", json={"content": said, "captured_at": "2024-03-15T04:30:00Z", "group_id": "utc"},
                    headers=auth())
    drain()
    for memory_id, day in ((lima.json()["id"], date(2024, 3, 15)), (episode.json()["episode"]["uuid"], date(2024, 3, 15)),
                           (utc.json()["id"], date(2024, 3, 16))):
        captured_at, valid_at = _valid_at(http, memory_id)
        assert captured_at == "2024-03-15T04:30:00Z"  # answered as before: the instant, in UTC
        assert valid_at.astimezone(LIMA if day.day == 15 else UTC).date() == day
    assert _valid_at(http, lima.json()["id"])[1] == datetime(2024, 3, 15, tzinfo=LIMA)  # local midnight there
