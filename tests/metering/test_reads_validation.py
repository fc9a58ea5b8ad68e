"""Each read is checked as utilities check them (X-READS); a failed read is kept and reported."""

from __future__ import annotations

from datetime import date
from decimal import Decimal

from support import Utility

GR = "grafton-sewer"


def utility() -> Utility:
    u = Utility(today=date(2026, 7, 10))
    u.meters(f"{GR},GR-M1,GR-1,water,gal,6,2026-01-01,1000,5/8,,")
    return u


def reasons(result: object) -> list[tuple[int, str, str]]:
    return [(r.line, r.column, r.reason) for r in result.first_rejections]  # type: ignore[attr-defined]


def test_the_same_read_again_is_a_duplicate_and_ignored() -> None:
    u = utility()
    u.reads(f"{GR},GR-M1,2026-03-01,9000,")
    again = u.reads(f"{GR},GR-M1,2026-03-01,9000,", f"{GR},GR-M1,2026-03-01,9000,")
    assert (again.accepted, again.repeated, again.rejected) == (0, 2, 0)


def test_a_conflicting_read_is_rejected_with_both_values() -> None:
    u = utility()
    u.reads(f"{GR},GR-M1,2026-03-01,9000,")
    result = u.reads(f"{GR},GR-M1,2026-03-01,9100,")
    [(line, column, reason)] = reasons(result)
    assert (line, column) == (2, "reading")
    assert "got 9100" in reason and "recorded 9000" in reason


def test_reads_in_the_future_or_before_the_install_are_rejected() -> None:
    u = utility()
    result = u.reads(f"{GR},GR-M1,2026-07-11,9000,", f"{GR},GR-M1,2025-12-31,900,")
    assert [(line, column) for line, column, _ in reasons(result)] == [(2, "read_on"), (3, "read_on")]
    assert "future" in reasons(result)[0][2] and "installed on 2026-01-01" in reasons(result)[1][2]
    assert len(u.repo.failed) == 2  # kept with their reasons, never dropped


def test_reads_out_of_order_in_a_file_are_taken_in_date_order() -> None:
    u = utility()
    result = u.reads(f"{GR},GR-M1,2026-07-01,23000,", f"{GR},GR-M1,2026-04-01,11000,")
    assert result.rejected == 0
    assert list(u.repo.volumes("GR-1").values()) == [Decimal(10000), Decimal(12000)]


def test_a_late_read_inside_a_period_already_determined_is_rejected() -> None:
    u = utility()
    u.reads(f"{GR},GR-M1,2026-04-01,11000,")
    result = u.reads(f"{GR},GR-M1,2026-03-01,9000,")
    [(_, column, reason)] = reasons(result)
    assert column == "read_on" and "already determined" in reason


def test_a_read_of_an_unknown_meter_is_rejected_by_line() -> None:
    u = utility()
    result = u.reads(f"{GR},GR-M1,2026-04-01,11000,", f"{GR},NOPE,2026-04-01,11000,")
    assert reasons(result) == [(3, "meter_id", "unknown meter NOPE of grafton-sewer")]
    assert result.accepted == 1


def test_a_reading_with_more_digits_than_the_register_is_rejected() -> None:
    u = utility()
    [(_, column, reason)] = reasons(u.reads(f"{GR},GR-M1,2026-04-01,1000000,"))
    assert column == "reading" and "6-digit register" in reason


def test_the_same_file_twice_changes_nothing() -> None:
    u = utility()
    text = "tenant,meter_id,read_on,reading\n" + f"{GR},GR-M1,2026-04-01,11000\n"
    u.upload("reads", text, key="reads/a.csv")
    before = (dict(u.repo.accounts_), len(u.repo.chunks), len(u.repo.reads))
    again = u.upload("reads", text, key="reads/a-again.csv")
    assert again.duplicate_file
    assert (dict(u.repo.accounts_), len(u.repo.chunks), len(u.repo.reads)) == before


def test_a_meter_registry_change_is_kept_but_its_register_cannot_change() -> None:
    u = utility()
    same = u.meters(
        f"{GR},GR-M1,GR-1,water,gal,6,2026-01-01,1000,5/8,,", f"{GR},GR-M9,GR-9,water,gal,6,2026-01-01,0,,,"
    )
    assert (same.accepted, same.repeated) == (1, 1)  # the repeated row changes nothing
    resized = u.meters(f"{GR},GR-M1,GR-1,water,gal,6,2026-01-01,1000,1,,")
    assert (resized.accepted, resized.changed) == (0, 1)  # a record: a new version, kept as history
    moved = u.meters(f"{GR},GR-M1,GR-2,water,gal,6,2026-01-01,1000,1,,")
    [(_, column, reason)] = reasons(moved)
    assert column == "account_id" and "cannot change" in reason
