"""Billing's import readers (accounts/ and payments/) against issues 26 and 27: one set of
counters adding up to the file's lines, repeated and changed lines by kind (records vs
facts), a redelivery after a crash counting as the run without it, payments for accounts
not known yet waiting in suspense until they arrive, and every field checked against the
world it lives in. On moto, in-process."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from handler_support import TABLES, Stack, authorized_http_event, lambda_context, sqs_event

from billing.adapters.repository import BillingRepo
from billing.app import accounts as accounts_app
from billing.app import common as app_common
from billing.app.accounts import bills_from_rules, take_in_account_file
from billing.app.common import FileResult
from billing.app.payments import SUSPENSE_COLUMNS, release_waiting, take_in_lockbox_file, waiting_payments
from billing.handlers import api, on_file_uploaded
from common.tariff_files import default_tariffs_dir, load_tariff_book

BOOK = load_tariff_book(default_tariffs_dir())
TENANTS = BOOK.tenants
NOW = datetime(2026, 11, 2, 15, tzinfo=UTC)
HEADER = "tenant,account_id,name,service_address,mailing_address,zip,opened_on,class,meter_size\n"
LOCKBOX = "tenant,account_id,reference,paid_on,amount\n"


def acct(aid: str, name: str = "Ann", **cells: str) -> str:
    row = {
        "tenant": "grafton-sewer",
        "account_id": aid,
        "name": name,
        "service_address": "1 Main St",
        "mailing_address": "1 Main St",
        "zip": "53024",
        "opened_on": "2026-01-01",
        "class": "residential",
        "meter_size": "5/8",
        **cells,
    }
    return ",".join(row.values()) + "\n"


def pay(aid: str, ref: str, amount: str = "10.00", paid_on: str = "2026-10-05") -> str:
    return f"grafton-sewer,{aid},{ref},{paid_on},{amount}\n"


@pytest.fixture
def repo(billing: Stack) -> BillingRepo:
    return BillingRepo(billing.ddb, TABLES["billing"])


def accounts_in(
    repo: BillingRepo, text: str, run: str = "run-1", source: str = "accounts/a.csv", now: datetime = NOW
) -> FileResult:
    return take_in_account_file(
        [text.encode()],
        source=source,
        run=run,
        repo=repo,
        tenants=TENANTS,
        now=now,
        rules=bills_from_rules(BOOK, NOW.date()),
        release=lambda t, ids: release_waiting(t, ids, repo=repo, now=NOW, book=BOOK),
    )


def payments_in(
    repo: BillingRepo, text: str, run: str = "run-p", source: str = "payments/p.csv"
) -> FileResult:
    return take_in_lockbox_file(
        [text.encode()], run=run, source=source, repo=repo, tenants=TENANTS, now=NOW, book=BOOK
    )


def counts(result: FileResult) -> dict[str, int]:
    return {k: v for k, v in result.counts.as_dict().items() if v}


def ledger_payments(stack: Stack) -> list[tuple[str, str, str]]:
    return sorted(
        (i["account_id"], i["amount"], i["posted_on"])
        for i in stack.items("billing")
        if i["pk"].startswith("LEDGER#") and i.get("kind") == "payment"
    )


# ------------------------------------------------------------------ accounts are records


def test_an_identical_accounts_file_uploaded_again_is_all_repeated(repo: BillingRepo) -> None:
    text = HEADER + acct("GR-1") + acct("GR-2") + acct("GR-3")
    assert counts(accounts_in(repo, text)) == {"lines": 3, "accepted": 3}
    again = accounts_in(repo, text, run="run-2", source="accounts/again.csv")
    assert counts(again) == {"lines": 3, "repeated": 3}
    assert again.counts.duplicate_file


def test_a_duplicate_line_inside_an_accounts_file_is_counted_repeated(repo: BillingRepo) -> None:
    result = accounts_in(repo, HEADER + acct("GR-1") + acct("GR-1") + acct("GR-2"))
    assert counts(result) == {"lines": 3, "accepted": 2, "repeated": 1}


def test_a_changed_account_line_is_a_new_version_kept_as_history(repo: BillingRepo) -> None:
    accounts_in(repo, HEADER + acct("GR-1"))
    result = accounts_in(
        repo, HEADER + acct("GR-1", name="Ann Lee") + acct("GR-1", name="Ann B"), run="run-2"
    )
    assert counts(result) == {"lines": 2, "changed": 2}
    history = [json.loads(h["record"])["name"] for h in repo.account_history("grafton-sewer", "GR-1")]
    assert history == ["Ann", "Ann Lee", "Ann B"]
    current = repo.account("grafton-sewer", "GR-1")
    assert current is not None and current.name == "Ann B"


def crash_on_write(monkeypatch: pytest.MonkeyPatch, method: str, nth: int) -> None:
    real = getattr(BillingRepo, method)
    calls = {"n": 0}

    def crashing(self: BillingRepo, *args: Any, **kwargs: Any) -> Any:
        calls["n"] += 1
        if calls["n"] == nth:
            raise RuntimeError("injected crash")
        return real(self, *args, **kwargs)

    monkeypatch.setattr(BillingRepo, method, crashing)


def test_an_accounts_file_redelivered_after_a_crash_reports_what_a_run_without_it_would(
    repo: BillingRepo, monkeypatch: pytest.MonkeyPatch
) -> None:
    accounts_in(repo, HEADER + acct("GR-9"), run="before")
    text = (
        HEADER
        + acct("GR-1")
        + acct("GR-9", name="Nine")
        + acct("GR-1")
        + acct("GR-2")
        + acct("GR-2", name="B")
    )
    text += acct("GR-3", zip="ABCDE")
    monkeypatch.setattr(app_common, "BATCH_LINES", 2)
    monkeypatch.setattr(accounts_app, "batches", lambda items: app_common.batches(items, 2))
    crash_on_write(monkeypatch, "store_account_lines", 2)  # after the first batch, in the second
    with pytest.raises(RuntimeError):
        accounts_in(repo, text)
    monkeypatch.undo()
    monkeypatch.setattr(accounts_app, "batches", lambda items: app_common.batches(items, 2))
    redelivered = accounts_in(repo, text, now=NOW + timedelta(minutes=5))
    expected = {"lines": 6, "accepted": 2, "changed": 2, "repeated": 1, "rejected": 1}
    assert counts(redelivered) == expected
    # once more (a redelivery after the run finished): the same counts, no new version
    assert counts(accounts_in(repo, text)) == expected
    assert len(repo.account_history("grafton-sewer", "GR-2")) == 2
    assert len(repo.account_history("grafton-sewer", "GR-1")) == 1


# ------------------------------------------------------------------ payments are facts


def test_a_payment_repeated_in_a_file_is_repeated_and_one_with_other_values_rejected_with_both(
    billing: Stack, repo: BillingRepo
) -> None:
    accounts_in(repo, HEADER + acct("GR-1"))
    result = payments_in(
        repo, LOCKBOX + pay("GR-1", "CHK-1") + pay("GR-1", "CHK-1") + pay("GR-1", "CHK-1", "12.00")
    )
    assert counts(result) == {"lines": 3, "accepted": 1, "repeated": 1, "rejected": 1}
    [conflict] = result.rejected
    assert (conflict.line, conflict.column) == (4, "reference")
    assert "GR-1 2026-10-05 10.00" in conflict.reason and "GR-1 2026-10-05 12.00" in conflict.reason
    again = payments_in(repo, LOCKBOX + pay("GR-1", "CHK-1"), run="run-2")
    assert counts(again) == {"lines": 1, "repeated": 1} and again.counts.duplicate_file
    assert ledger_payments(billing) == [("GR-1", "-10.00", "2026-10-05")]


def test_a_lockbox_file_redelivered_after_a_crash_posts_each_payment_once_and_counts_the_same(
    billing: Stack, repo: BillingRepo, monkeypatch: pytest.MonkeyPatch
) -> None:
    accounts_in(repo, HEADER + acct("GR-1") + acct("GR-2"))
    text = (
        LOCKBOX
        + pay("GR-1", "A")
        + pay("GR-2", "B")
        + pay("GR-1", "A")
        + pay("NEW-1", "C")
        + pay("GR-2", "D")
    )
    monkeypatch.setattr("billing.app.payments.batches", lambda items: app_common.batches(items, 2))
    crash_on_write(monkeypatch, "write", 4)  # part-way through the second batch
    with pytest.raises(RuntimeError):
        payments_in(repo, text)
    monkeypatch.undo()
    monkeypatch.setattr("billing.app.payments.batches", lambda items: app_common.batches(items, 2))
    expected = {"lines": 5, "accepted": 3, "repeated": 1, "waiting": 1}
    assert counts(payments_in(repo, text)) == expected
    assert counts(payments_in(repo, text)) == expected
    assert ledger_payments(billing) == [
        ("GR-1", "-10.00", "2026-10-05"),
        ("GR-2", "-10.00", "2026-10-05"),
        ("GR-2", "-10.00", "2026-10-05"),
    ]
    applied = [o for o in billing.outbox("billing") if o["detail_type"] == "PaymentApplied"]
    assert len(applied) == 3


# ------------------------------------------------------------------ suspense


def test_a_payment_for_an_unknown_account_waits_and_is_taken_in_once_when_the_account_arrives(
    billing: Stack, repo: BillingRepo
) -> None:
    result = payments_in(repo, LOCKBOX + pay("GR-7", "CHK-7", "25.00"))
    assert counts(result) == {"lines": 1, "waiting": 1}
    [why] = result.waiting
    assert (why.line, why.column) == (
        2,
        "account_id",
    ) and "'GR-7' is not known at grafton-sewer yet" in why.reason
    assert ledger_payments(billing) == []
    rows, following = waiting_payments(repo, "grafton-sewer")
    assert [(r["account_id"], r["reference"], r["amount"], r["line"]) for r in rows] == [
        ("GR-7", "CHK-7", "25.00", 2)
    ]
    assert following is None
    # the same file again: still waiting (not a duplicate file: it can turn out differently)
    again = payments_in(repo, LOCKBOX + pay("GR-7", "CHK-7", "25.00"), run="run-2")
    assert counts(again) == {"lines": 1, "waiting": 1} and not again.counts.duplicate_file
    assert counts(accounts_in(repo, HEADER + acct("GR-7"))) == {"lines": 1, "accepted": 1}
    assert ledger_payments(billing) == [("GR-7", "-25.00", "2026-10-05")]
    assert waiting_payments(repo, "grafton-sewer") == ([], None)
    # the account's file again and the payment file again: nothing posted twice
    accounts_in(repo, HEADER + acct("GR-7"), run="run-3")
    assert counts(payments_in(repo, LOCKBOX + pay("GR-7", "CHK-7", "25.00"), run="run-4")) == {
        "lines": 1,
        "repeated": 1,
    }
    assert ledger_payments(billing) == [("GR-7", "-25.00", "2026-10-05")]
    applied = [o for o in billing.outbox("billing") if o["detail_type"] == "PaymentApplied"]
    assert len(applied) == 1


STAFF = {"sub": "clerk", "role": "staff", "tenants": "[grafton-sewer]"}


def call(method: str, path: str, query: dict[str, str] | None = None, body: Any = None) -> tuple[int, str]:
    event = authorized_http_event(method, path, STAFF, query, body=None if body is None else json.dumps(body))
    response = api.lambda_handler(event, lambda_context())
    return response["statusCode"], response["body"]


def test_the_suspense_report_is_paged_and_its_csv_spreadsheet_safe(billing: Stack, repo: BillingRepo) -> None:
    payments_in(repo, LOCKBOX + pay("X-1", "R-1") + pay("X-2", "R-2") + pay("X-3", "R-3"))
    status, text = call("GET", "/staff/grafton-sewer/reports/suspense", {"limit": "2"})
    assert status == 200, text
    body = json.loads(text)
    assert [r["reference"] for r in body["rows"]] == ["R-1", "R-2"] and body["next_cursor"] == "2"
    status, text = call("GET", "/staff/grafton-sewer/reports/suspense", {"limit": "2", "cursor": "2"})
    body = json.loads(text)
    assert [r["reference"] for r in body["rows"]] == ["R-3"] and body["next_cursor"] is None
    status, text = call("GET", "/staff/grafton-sewer/reports/suspense", {"format": "csv"})
    assert status == 200 and text.splitlines()[0] == ",".join(SUSPENSE_COLUMNS)
    assert len(text.splitlines()) == 4


def test_creating_the_account_by_the_staff_route_takes_in_its_waiting_payment(
    billing: Stack, repo: BillingRepo
) -> None:
    payments_in(repo, LOCKBOX + pay("GR-8", "CHK-8", "30.00"))
    cells = {
        "name": "Eight",
        "service_address": "8 Main St",
        "mailing_address": "8 Main St",
        "zip": "53024",
        "opened_on": "2026-01-01",
        "class": "residential",
        "meter_size": "5/8",
    }
    status, text = call("PUT", "/staff/grafton-sewer/accounts/GR-8", body=cells)
    assert status == 200, text
    assert ledger_payments(billing) == [("GR-8", "-30.00", "2026-10-05")]
    assert waiting_payments(repo, "grafton-sewer") == ([], None)


@pytest.mark.parametrize(
    ("body", "cause"),
    [
        ({"paid_on": "1900-01-01"}, "paid_on: 1900-01-01 is before the first tariff of grafton-sewer"),
        ({"account_id": "GR:1+x(2)", "amount": "0.001"}, "amount"),
    ],
)
def test_the_payment_api_uses_the_lockbox_files_field_rules(
    billing: Stack, body: dict[str, str], cause: str
) -> None:
    payment = {"tenant": "grafton-sewer", "account_id": "GR-1", "amount": "10.00", **body}
    event = authorized_http_event(
        "POST", "/payments", STAFF, body=json.dumps(payment), headers={"idempotency-key": "key-00001"}
    )
    response = api.lambda_handler(event, lambda_context())
    assert response["statusCode"] == 400 and cause in response["body"], response


# ------------------------------------------------------------------ fields (issue 27)


@pytest.mark.parametrize(
    ("line", "column", "cause"),
    [
        (acct("GR-1", zip="ABCDE"), "zip", "is not a US ZIP code"),
        (acct("GR-1", meter_size="7/8"), "meter_size", "is not listed by the tariff of grafton-sewer"),
        (acct("GR-1", opened_on="2100-01-01"), "opened_on", "more than 366 days after today"),
        (acct("GR-1", name="=HYPERLINK(x)"), "name", "a spreadsheet formula is refused"),
        (acct("GR-1", name="@SUM(1)"), "name", "a spreadsheet formula is refused"),
        (acct("../../etc/passwd"), "account_id", "holds a slash"),
        (acct("GR\x001"), "account_id", "holds a control character (U+0000)"),
        (acct("G" * 2000), "account_id", "is 2000 characters long"),
        ("grafton-sewer,GR-1,Ann,1 Main St,1 Main St,53024,2026-01-01\n", "class", "is required"),
    ],
)
def test_an_accounts_line_against_the_world_is_refused_naming_line_column_and_cause(
    repo: BillingRepo, line: str, column: str, cause: str
) -> None:
    result = accounts_in(repo, HEADER + acct("GR-0") + line)
    assert counts(result) == {"lines": 2, "accepted": 1, "rejected": 1}
    [error] = result.rejected
    assert (error.line, error.column) == (3, column) and cause in error.reason, error


def test_accounts_zone_and_closed_on_and_bills_from_are_checked(repo: BillingRepo) -> None:
    header = HEADER.strip() + ",zone,closed_on,bills_from\n"
    rows = [
        acct("GR-1").strip() + ",PP,,\n",  # Grafton has no rate zones
        acct("GR-2").strip() + ",,2025-12-01,\n",  # closed before opened
        acct("GR-3").strip() + ",,,2024-01-01\n",  # before the period of opened_on
    ]
    result = accounts_in(repo, header + "".join(rows))
    assert [(e.line, e.column) for e in result.rejected] == [(2, "zone"), (3, "closed_on"), (4, "bills_from")]


@pytest.mark.parametrize(
    ("line", "column", "cause"),
    [
        (pay("GR-1", "R-1", paid_on="1900-01-01"), "paid_on", "is before the first tariff of grafton-sewer"),
        (pay("GR-1", "R-1", paid_on="2100-01-01"), "paid_on", "after the day the file is taken in"),
        (pay("GR-1", "=1+2"), "reference", "a spreadsheet formula is refused"),
        (pay("GR/1", "R-1"), "account_id", "holds a slash"),
        (pay("GR-1", "R-1", amount="+5"), "amount", "a spreadsheet formula is refused"),
    ],
)
def test_a_lockbox_line_against_the_world_is_refused_naming_line_column_and_cause(
    billing: Stack, repo: BillingRepo, line: str, column: str, cause: str
) -> None:
    accounts_in(repo, HEADER + acct("GR-1"))
    result = payments_in(repo, LOCKBOX + line)
    assert counts(result) == {"lines": 1, "rejected": 1}
    [error] = result.rejected
    assert (error.line, error.column) == (2, column) and cause in error.reason, error
    assert ledger_payments(billing) == []


def test_a_negative_amount_is_a_returned_check_not_a_formula(billing: Stack, repo: BillingRepo) -> None:
    accounts_in(repo, HEADER + acct("GR-1"))
    assert counts(payments_in(repo, LOCKBOX + pay("GR-1", "RET-1", "-10.00"))) == {"lines": 1, "accepted": 1}


# ------------------------------------------------------------------ the handler


def test_the_handler_streams_the_body_and_writes_rejected_and_waiting_lines_to_the_report(
    billing: Stack,
) -> None:
    body = billing.put_upload(
        "payments/x.csv", (LOCKBOX + pay("NOPE", "R-1") + pay("GR-1", "R-2", "abc")).encode()
    )
    on_file_uploaded.lambda_handler(sqs_event(json.dumps(body)), lambda_context())
    [report] = [
        o["Key"]
        for o in billing.s3.list_objects_v2(Bucket=body["detail"]["bucket"]["name"])["Contents"]
        if o["Key"].startswith("reports/billing/payments/x.csv/")
    ]
    text = billing.s3.get_object(Bucket=body["detail"]["bucket"]["name"], Key=report)["Body"].read().decode()
    rows = [json.loads(r) for r in text.splitlines()]
    assert sorted((r["line"], r["column"], r["outcome"]) for r in rows) == [
        (2, "account_id", "waiting"),
        (3, "amount", "rejected"),
    ]


def test_past_the_files_bound_of_waiting_lines_each_is_rejected_with_the_reason(
    repo: BillingRepo, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("billing.app.payments.MAX_WAITING_LINES", 2)
    accounts_in(repo, HEADER + acct("GR-1"))
    text = LOCKBOX + pay("U-1", "R-1") + pay("U-2", "R-2") + pay("U-3", "R-3") + pay("GR-1", "R-4")
    result = payments_in(repo, text)
    assert counts(result) == {"lines": 4, "waiting": 2, "rejected": 1, "accepted": 1}
    [error] = result.rejected
    assert (error.line, error.column) == (4, "account_id") and "upload the accounts first" in error.reason


def test_an_accounts_batch_half_written_by_a_crash_is_finished_without_a_second_version(
    repo: BillingRepo, monkeypatch: pytest.MonkeyPatch
) -> None:
    accounts_in(repo, HEADER + acct("GR-1") + acct("GR-2"), run="before")
    text = HEADER + acct("GR-1", name="One") + acct("GR-2", name="Two") + acct("GR-3")
    real = BillingRepo.write

    def half(self: BillingRepo, items: Any, *args: Any, **kwargs: Any) -> Any:
        listed = list(items)
        real(self, listed[:1], *args, **kwargs)  # GR-1's new history item only
        raise RuntimeError("injected crash")

    monkeypatch.setattr(BillingRepo, "write", half)
    with pytest.raises(RuntimeError):
        accounts_in(repo, text)
    monkeypatch.undo()
    later = NOW + timedelta(minutes=5)  # the redelivery comes later
    assert counts(accounts_in(repo, text, now=later)) == {"lines": 3, "changed": 2, "accepted": 1}
    names = [json.loads(h["record"])["name"] for h in repo.account_history("grafton-sewer", "GR-1")]
    assert names == ["Ann", "One"]
