"""Billing publishes its accounts; sampling and metering keep them (issue 26). On moto,
in-process, through the handlers:

- every account version billing records is its own outbox item: the accounts file's
  history INSERTs go out as ``AccountsChanged`` chunks, and the same file again publishes
  nothing;
- sampling takes in a lab result for any billed account (sampled at its service address
  until staff register a sampling point); a lab line for an account not known yet waits in
  suspense and is taken in when the account arrives; one whose account never arrives is
  listed at ``GET /staff/{tenant}/lab-suspense``;
- metering: a new meter on an account not known yet (of a tenant billing has published
  accounts of) waits, and is registered when the account arrives;
- an account event delivered twice changes nothing.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, date, datetime, timedelta
from typing import Any

import pytest
from handler_support import TABLES, Stack, http_event, lambda_context, sqs_event

from billing.adapters.bill_outbox import account_records
from billing.events import AccountsChanged
from billing.handlers import on_file_uploaded as billing_upload
from common import clock
from metering.handlers import api as metering_api
from metering.handlers import on_read_file_uploaded as metering_upload
from sampling.handlers import api as sampling_api
from sampling.handlers import on_accounts_changed, on_lab_file_uploaded

PP = "pleasant-prairie-sewer"
ACCOUNTS_HEADER = "tenant,account_id,name,service_address,mailing_address,zip,opened_on,class,meter_size\n"
LAB_HEADER = "tenant,sample_id,account_id,collected_on,parameter,value,units,analysed_on,lab,kind\n"
METERS_HEADER = "tenant,meter_id,account_id,kind,units,digits,installed_on,initial_reading,size\n"


def account_line(account_id: str, address: str, cls: str = "nonresidential") -> str:
    return f"{PP},{account_id},Brewer {account_id},{address},PO Box 1,53158,2025-01-01,{cls},5/8\n"


@pytest.fixture
def env(stack: Stack, monkeypatch: pytest.MonkeyPatch) -> Iterator[Stack]:
    fixed = clock.FixedClock(datetime(2026, 1, 5, 15, 0, tzinfo=UTC))
    clock.install(fixed)
    stack.clock = fixed  # type: ignore[attr-defined]
    yield stack
    clock.install(None)


def as_service(monkeypatch: pytest.MonkeyPatch, service: str) -> None:
    """The environment of one service's functions (template.yaml's TABLE_NAME)."""
    monkeypatch.setenv("TABLE_NAME", TABLES[service])


def accounts_file(env: Stack, monkeypatch: pytest.MonkeyPatch, key: str, text: str) -> list[str]:
    """Billing takes in an accounts file; returns the ``AccountsChanged`` bodies its stream
    publishes (what the rules deliver to sampling's and metering's queues)."""
    as_service(monkeypatch, "billing")
    env.clock.advance(timedelta(minutes=1))  # type: ignore[attr-defined]  # each file a minute later
    body = json.dumps(env.put_upload(key, (ACCOUNTS_HEADER + text).encode()))
    assert billing_upload.lambda_handler(sqs_event(body), lambda_context()) == {"batchItemFailures": []}
    return [
        json.dumps(
            {
                "version": "0",
                "id": "e-" + r.sequence_number,
                "detail-type": r.detail_type,
                "source": r.source,
                "account": "123456789012",
                "time": "2026-01-05T15:00:00Z",
                "region": "us-east-1",
                "resources": [],
                "detail": json.loads(r.detail),
            }
        )
        for r in account_records(env.stream_records("billing"))
    ]


def to_sampling(monkeypatch: pytest.MonkeyPatch, bodies: list[str]) -> None:
    as_service(monkeypatch, "sampling")
    assert on_accounts_changed.lambda_handler(sqs_event(*bodies), lambda_context()) == {
        "batchItemFailures": []
    }


def lab_file(env: Stack, monkeypatch: pytest.MonkeyPatch, key: str, text: str) -> None:
    as_service(monkeypatch, "sampling")
    body = json.dumps(env.put_upload(key, (LAB_HEADER + text).encode()))
    assert on_lab_file_uploaded.lambda_handler(sqs_event(body), lambda_context()) == {"batchItemFailures": []}


def staff_get(handler: Any, path: str) -> tuple[int, Any]:
    event = http_event("GET", path)
    event["requestContext"]["authorizer"] = {
        "jwt": {"claims": {"sub": "clerk-bo", "role": "staff", "tenants": f"[{PP}]"}, "scopes": None}
    }
    resp = handler.lambda_handler(event, lambda_context())
    return resp["statusCode"], json.loads(resp["body"])


def sampling_outbox(env: Stack, detail_type: str) -> list[dict[str, Any]]:
    return [json.loads(i["detail"]) for i in env.outbox("sampling") if i["detail_type"] == detail_type]


def test_each_recorded_version_is_published_once_packed_per_tenant(
    env: Stack, monkeypatch: pytest.MonkeyPatch
) -> None:
    text = account_line("PP-0101", "9100 Bain Station Rd") + account_line(
        "PP-0102", "8810 39th Ave", "residential"
    )
    [body] = accounts_file(env, monkeypatch, "accounts/a.csv", text)
    event = AccountsChanged.model_validate(json.loads(body)["detail"])
    assert (event.tenant, event.first_account_id, event.last_account_id) == (PP, "PP-0101", "PP-0102")
    first, second = event.accounts
    assert (first.service_address, first.account_class, second.account_class) == (
        "9100 Bain Station Rd",
        "nonresidential",
        "residential",
    )
    assert first.version < second.version  # each line its own instant, in file order
    # The same file under another key records nothing new, so nothing is published again.
    assert accounts_file(env, monkeypatch, "accounts/a-again.csv", text) == []
    # A change is a new version, published.
    [changed] = accounts_file(
        env, monkeypatch, "accounts/b.csv", account_line("PP-0101", "9102 Bain Station Rd")
    )
    (version,) = AccountsChanged.model_validate(json.loads(changed)["detail"]).accounts
    assert version.service_address == "9102 Bain Station Rd" and version.version > first.version


def test_the_staff_account_route_publishes_the_version_it_records(
    env: Stack, monkeypatch: pytest.MonkeyPatch
) -> None:
    from billing.handlers import api as billing_api

    accounts_file(env, monkeypatch, "accounts/a.csv", account_line("PP-0101", "9100 Bain Station Rd"))
    env.clock.advance(timedelta(minutes=1))  # type: ignore[attr-defined]
    event = http_event("PUT", f"/staff/{PP}/accounts/PP-0101")
    event["body"] = json.dumps(
        {
            "name": "Brewer PP-0101",
            "service_address": "9100 Bain Station Rd",
            "mailing_address": "PO Box 1",
            "zip": "53158",
            "opened_on": "2025-01-01",
            "closed_on": "2025-12-31",
            "class": "nonresidential",
            "meter_size": "5/8",
        }
    )
    event["headers"]["content-type"] = "application/json"
    event["requestContext"]["authorizer"] = {
        "jwt": {"claims": {"sub": "clerk-bo", "role": "staff", "tenants": f"[{PP}]"}, "scopes": None}
    }
    resp = billing_api.lambda_handler(event, lambda_context())
    assert resp["statusCode"] == 200, resp["body"]
    [record] = account_records(env.stream_records("billing"))
    (closed,) = AccountsChanged.model_validate_json(record.detail).accounts
    assert (closed.account_id, closed.closed_on) == ("PP-0101", date(2025, 12, 31))


def test_a_lab_result_for_a_billed_account_is_taken_in_at_its_service_address(
    env: Stack, monkeypatch: pytest.MonkeyPatch
) -> None:
    bodies = accounts_file(
        env, monkeypatch, "accounts/a.csv", account_line("PP-0101", "9100 Bain Station Rd")
    )
    to_sampling(monkeypatch, bodies)
    lab_file(
        env, monkeypatch, "lab/1.csv", f"{PP},S-1,PP-0101,2025-12-15,bod,220,mg/l,2025-12-17,Acme,routine\n"
    )
    (summary,) = sampling_outbox(env, "LabFileTakenIn")
    assert (summary["accepted"], summary["rejected"], summary["waiting"]) == (1, 0, 0)
    status, view = staff_get(sampling_api, f"/staff/{PP}/accounts/PP-0101/samples")
    assert status == 200 and view["sampling_point"] == "9100 Bain Station Rd"
    assert view["category"] == "B"  # BOD 220 > 180 (PP-SEW-CAT-A)


def test_a_lab_line_waits_for_its_account_and_is_taken_in_when_it_arrives(
    env: Stack, monkeypatch: pytest.MonkeyPatch
) -> None:
    lab_file(
        env, monkeypatch, "lab/1.csv", f"{PP},S-1,PP-0101,2025-12-15,bod,220,mg/l,2025-12-17,Acme,routine\n"
    )
    (summary,) = sampling_outbox(env, "LabFileTakenIn")
    assert (summary["accepted"], summary["rejected"], summary["waiting"]) == (0, 0, 1)
    status, listed = staff_get(sampling_api, f"/staff/{PP}/lab-suspense")
    assert status == 200
    [line] = listed["lines"]
    assert (line["account_id"], line["sample_id"], line["line"], line["outcome"]) == (
        "PP-0101",
        "S-1",
        2,
        "waiting",
    )
    assert "not known to sampling yet" in line["reason"]

    bodies = accounts_file(
        env, monkeypatch, "accounts/a.csv", account_line("PP-0101", "9100 Bain Station Rd")
    )
    to_sampling(monkeypatch, bodies)
    assert staff_get(sampling_api, f"/staff/{PP}/lab-suspense")[1]["lines"] == []
    _, view = staff_get(sampling_api, f"/staff/{PP}/accounts/PP-0101/samples")
    assert view["category"] == "B"
    (charges,) = sampling_outbox(env, "SamplingCostsCharged")
    assert [c["charge_id"] for c in charges["charges"]] == ["sample:S-1"]  # PP-SEW-SAMPLE-COST, once
    assert len(sampling_outbox(env, "StrengthCategoryChanged")) == 1

    # The account event delivered again changes nothing.
    items = env.items("sampling")
    to_sampling(monkeypatch, bodies)
    assert env.items("sampling") == items


def test_a_lab_line_whose_account_never_arrives_stays_reported(
    env: Stack, monkeypatch: pytest.MonkeyPatch
) -> None:
    bodies = accounts_file(
        env, monkeypatch, "accounts/a.csv", account_line("PP-0101", "9100 Bain Station Rd")
    )
    to_sampling(monkeypatch, bodies)
    lab_file(
        env,
        monkeypatch,
        "lab/1.csv",
        f"{PP},S-1,PP-0101,2025-12-15,bod,220,mg/l,2025-12-17,Acme,routine\n"
        f"{PP},S-2,PP-0999,2025-12-15,bod,120,mg/l,2025-12-17,Acme,routine\n",
    )
    (summary,) = sampling_outbox(env, "LabFileTakenIn")
    assert (summary["accepted"], summary["waiting"]) == (1, 1)
    [line] = staff_get(sampling_api, f"/staff/{PP}/lab-suspense")[1]["lines"]
    assert (line["account_id"], line["file_key"], line["outcome"]) == ("PP-0999", "lab/1.csv", "waiting")
    # Another account's event does not take it in.
    to_sampling(
        monkeypatch, accounts_file(env, monkeypatch, "accounts/b.csv", account_line("PP-0102", "1 Main"))
    )
    assert len(staff_get(sampling_api, f"/staff/{PP}/lab-suspense")[1]["lines"]) == 1


def meters_file(env: Stack, monkeypatch: pytest.MonkeyPatch, key: str, text: str) -> None:
    as_service(monkeypatch, "metering")
    body = json.dumps(env.put_upload(key, (METERS_HEADER + text).encode()))
    assert metering_upload.lambda_handler(sqs_event(body), lambda_context()) == {"batchItemFailures": []}


def to_metering(monkeypatch: pytest.MonkeyPatch, bodies: list[str]) -> None:
    as_service(monkeypatch, "metering")
    assert metering_upload.lambda_handler(sqs_event(*bodies), lambda_context()) == {"batchItemFailures": []}


def meter_items(env: Stack) -> list[str]:
    return sorted(i["pk"] for i in env.items("metering") if i["sk"] == "METER")


def test_a_meter_uploaded_before_its_account_waits_and_is_registered_when_it_arrives(
    env: Stack, monkeypatch: pytest.MonkeyPatch
) -> None:
    to_metering(
        monkeypatch, accounts_file(env, monkeypatch, "accounts/a.csv", account_line("PP-0101", "1 Main"))
    )
    meters_file(
        env,
        monkeypatch,
        "meters/1.csv",
        f"{PP},M-101,PP-0101,water,gal,6,2025-01-01,0,5/8\n{PP},M-102,PP-0102,water,gal,6,2025-01-01,0,5/8\n",
    )
    assert meter_items(env) == [f"METER#{PP}#M-101"]
    status, listed = staff_get(metering_api, f"/staff/{PP}/meter-suspense")
    assert status == 200
    [line] = listed["lines"]
    assert (line["account_id"], line["meter_id"], line["line"], line["outcome"]) == (
        "PP-0102",
        "M-102",
        3,
        "waiting",
    )

    bodies = accounts_file(env, monkeypatch, "accounts/b.csv", account_line("PP-0102", "2 Main"))
    to_metering(monkeypatch, bodies)
    assert meter_items(env) == [f"METER#{PP}#M-101", f"METER#{PP}#M-102"]
    assert staff_get(metering_api, f"/staff/{PP}/meter-suspense")[1]["lines"] == []
    state = [i for i in env.items("metering") if i["pk"] == f"ACCOUNT#{PP}#PP-0102"]
    assert len(state) == 1 and "M-102" in state[0]["state"]

    # The account event delivered again changes nothing.
    items = env.items("metering")
    to_metering(monkeypatch, bodies)
    assert env.items("metering") == items


def test_a_tenant_billing_has_published_no_account_of_takes_meters_in_as_before(
    env: Stack, monkeypatch: pytest.MonkeyPatch
) -> None:
    meters_file(env, monkeypatch, "meters/1.csv", f"{PP},M-102,PP-0102,water,gal,6,2025-01-01,0,5/8\n")
    assert meter_items(env) == [f"METER#{PP}#M-102"]
