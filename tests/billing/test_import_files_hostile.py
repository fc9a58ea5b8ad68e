"""Billing's import files (CONTRACTS.md "Import files") against input a utility's export or a
hand edit can produce: each bad line is reported with its line and reason and the good lines
are kept; nothing raises out of the reader (an exception would retry the file to the DLQ)."""

from __future__ import annotations

from billing.domain.accounts import parse_account_file
from billing.domain.payments import parse_lockbox_file

TENANTS = {"grafton-sewer"}
HEADER = "tenant,account_id,name,service_address,mailing_address,zip,opened_on,class,meter_size,parcel_id,owner_name\n"


def account(aid: str, name: str = "Ann") -> str:
    return f"grafton-sewer,{aid},{name},1 Main St,1 Main St,53024,2026-01-01,residential,5/8,GP-{aid},Ann\n"


def test_an_unquoted_comma_shifting_the_cells_is_the_lines_rejection_not_shifted_data() -> None:
    accepted, errors = parse_account_file(
        (HEADER + account("GR-1") + account("GR-2", name="Smith, John") + account("GR-3")).encode(),
        TENANTS,
    )
    assert [a.account_id for _, a in accepted] == ["GR-1", "GR-3"]
    assert [(e.line, e.column, e.reason) for e in errors] == [
        (3, "(line)", "12 cells where the header has 11 columns")
    ]


def test_a_cell_too_large_for_csv_is_rejected_and_the_lines_after_it_kept() -> None:
    accepted, errors = parse_account_file(
        (HEADER + account("GR-1", name="x" * 200_000) + account("GR-2")).encode(), TENANTS
    )
    assert [(line, a.account_id) for line, a in accepted] == [(3, "GR-2")]
    [error] = errors
    assert (error.line, error.column) == (2, "(line)")
    assert error.reason.startswith("not valid CSV: field larger than field limit")


def test_lines_ended_by_a_carriage_return_alone_and_a_quoted_line_break_keep_their_numbers() -> None:
    text = HEADER + account("GR-1") + account("GR-2", name='"Ann\nLee"') + account("GR-3")
    accepted, errors = parse_account_file(text.replace("\n", "\r").encode(), TENANTS)
    # the quoted name holds a line break (kept as the file has it: \r here), so GR-2's row
    # ends on line 4 and GR-3 is line 5; a name holding a line break is refused (issue 27:
    # text has no control characters)
    assert [(line, a.account_id, a.name) for line, a in accepted] == [(2, "GR-1", "Ann"), (5, "GR-3", "Ann")]
    assert [(e.line, e.column, e.reason) for e in errors] == [
        (4, "name", "holds a control character (U+000D)")
    ]


def test_a_lockbox_line_with_an_extra_cell_is_rejected_and_a_short_one_reports_its_column() -> None:
    lockbox = (
        "tenant,account_id,reference,paid_on,amount\n"
        "grafton-sewer,GR-1,LB-1,2026-10-05,10.00\n"
        "grafton-sewer,GR-1,LB-2,2026-10-05,1,000.00\n"  # an unquoted thousands separator
        "grafton-sewer,GR-1,LB-3,2026-10-05\n"
    )
    accepted, errors = parse_lockbox_file(lockbox.encode(), TENANTS)
    assert [p.reference for _, p in accepted] == ["LB-1"]
    assert [(e.line, e.column) for e in errors] == [(3, "(line)"), (4, "amount")]


def test_a_lockbox_line_dated_after_today_is_refused_and_today_is_taken() -> None:
    from datetime import date

    lockbox = (
        "tenant,account_id,reference,paid_on,amount\n"
        "grafton-sewer,GR-1,LB-1,2026-11-02,10.00\n"
        "grafton-sewer,GR-1,LB-2,2026-11-03,10.00\n"
    )
    accepted, errors = parse_lockbox_file(lockbox.encode(), TENANTS, date(2026, 11, 2))
    assert [p.reference for _, p in accepted] == ["LB-1"]
    assert [(e.line, e.column, e.reason) for e in errors] == [
        (3, "paid_on", "2026-11-03 is after the day the file is taken in (2026-11-02)")
    ]
