"""Backup and restore tried on the local runtime (DEPLOY.md section 7, issue 30).

AWS restores a table to a point in time, always into a new table; the local runtime stands
in for that with an export of the billing table to S3 and an import of the export into a
new table. The restored copy then repairs the live table in place with `sewerbill table
compare --write-back`: items lost since are put back, a damaged ledger entry is overwritten,
and a payment posted after the backup stays. The ledger the clerk sees afterwards is the
one before the damage plus that payment, and payments still post.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import pytest
import typer
from billing_support import publish, staff_get
from typer.testing import CliRunner

from metering.events import ConsumptionDetermined
from sewerbill import tablerepair
from sewerbill.cli import tables
from sewerbill.local import LocalRuntime

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]
HEADER = "tenant,account_id,name,service_address,mailing_address,zip,opened_on,class,meter_size,parcel_id,owner_name\n"
ACCOUNTS = HEADER + (
    "grafton-sewer,GR-1,Ann O'Brien,1 Main St,1 Main St,53024,2027-07-01,residential,5/8,GP-1,Ann O'Brien\n"
    'grafton-sewer,GR-2,"Bob ""Bud"" Lee",2 Main St,2 Main St,53024,2027-07-01,residential,5/8,GP-2,Bob Lee\n'
)
LOCKBOX = "tenant,account_id,reference,paid_on,amount\n"

app = typer.Typer()
tables.register(app)


@pytest.fixture(scope="module")
def rt() -> Iterator[LocalRuntime]:
    with LocalRuntime.start(
        REPO / "template.yaml",
        start_time=datetime(2027, 12, 31, 12, tzinfo=UTC),
        parameters={"TariffsDir": str(REPO / "infra" / "tariffs"), "Stage": "backup"},
        stack_name="backup",
    ) as runtime:
        yield runtime


def ledger(rt: LocalRuntime, account: str) -> list[dict[str, Any]]:
    return staff_get(rt, f"/staff/grafton-sewer/accounts/{account}/ledger", "grafton-sewer")["entries"]


def _wait(describe: Any, status_key: str) -> dict[str, Any]:
    for _ in range(200):
        answer: dict[str, Any] = describe()
        if answer[status_key] != "IN_PROGRESS":
            return answer
        time.sleep(0.05)
    raise AssertionError(f"still in progress: {answer}")


def _cli(rt: LocalRuntime, *args: str) -> str:
    result = CliRunner().invoke(app, ["table", "compare", *args, "--endpoint-url", rt.endpoint_url])
    assert result.exit_code == 0, result.output
    return result.output


def test_a_damaged_billing_table_is_repaired_in_place_from_a_restored_copy(rt: LocalRuntime) -> None:
    rt.upload("UploadsBucket", "accounts/2027.csv", ACCOUNTS)
    for account, gallons in (("GR-1", 23000), ("GR-2", 12000)):
        publish(
            rt,
            ConsumptionDetermined(
                occurred_at=datetime(2027, 12, 31, 12, tzinfo=UTC),
                tenant="grafton-sewer",
                account_id=account,
                period_start=date(2027, 10, 1),
                period_end=date(2028, 1, 1),
                volume_gal=gallons,
                source_file="reads/2027-q4.csv",
            ),
        )
    rt.clock.advance(to=datetime(2028, 1, 10, 18, tzinfo=UTC))
    rt.upload(
        "UploadsBucket",
        "payments/2028-01-10.csv",
        LOCKBOX
        + "grafton-sewer,GR-1,LBX-1,2028-01-10,50.00\n"
        + "grafton-sewer,GR-1,LBX-2,2028-01-10,10.00\n"
        + "grafton-sewer,GR-2,LBX-3,2028-01-10,20.00\n"
        + "grafton-sewer,GR-2,LBX-4,2028-01-10,5.00\n",
    )
    before = {a: ledger(rt, a) for a in ("GR-1", "GR-2")}
    assert [e["amount"] for e in before["GR-1"] if e["kind"] == "payment"] == ["-50.00", "-10.00"]

    ddb = rt.client("dynamodb")
    table = rt.resource("BillingTable")
    s3 = rt.client("s3")
    s3.create_bucket(Bucket="sewerbill-backup-exports")
    # The backup: PITR is on, as the template declares it, so the table can be exported.
    pitr = ddb.describe_continuous_backups(TableName=table)["ContinuousBackupsDescription"]
    assert pitr["PointInTimeRecoveryDescription"]["PointInTimeRecoveryStatus"] == "ENABLED"
    arn = ddb.describe_table(TableName=table)["Table"]["TableArn"]
    export = ddb.export_table_to_point_in_time(
        TableArn=arn, S3Bucket="sewerbill-backup-exports", S3Prefix="billing", ExportFormat="DYNAMODB_JSON"
    )["ExportDescription"]
    done = _wait(
        lambda: ddb.describe_export(ExportArn=export["ExportArn"])["ExportDescription"], "ExportStatus"
    )
    assert done["ExportStatus"] == "COMPLETED", done

    # The damage: three ledger entries lost, one changed (an amount), by a bad script.
    entries = ddb.query(
        TableName=table,
        KeyConditionExpression="pk = :pk",
        ExpressionAttributeValues={":pk": {"S": "LEDGER#grafton-sewer"}},
    )["Items"]
    assert len(entries) >= 4, entries
    for item in entries[:3]:
        ddb.delete_item(TableName=table, Key={"pk": item["pk"], "sk": item["sk"]})
    damaged = entries[3]
    ddb.update_item(
        TableName=table,
        Key={"pk": damaged["pk"], "sk": damaged["sk"]},
        UpdateExpression="SET amount = :a",
        ExpressionAttributeValues={":a": {"S": "-999.99"}},
    )
    # Work goes on after the backup: a payment the copy does not have.
    rt.clock.advance(to=datetime(2028, 1, 12, 18, tzinfo=UTC))
    rt.upload(
        "UploadsBucket", "payments/2028-01-12.csv", LOCKBOX + "grafton-sewer,GR-1,LBX-5,2028-01-12,7.00\n"
    )

    # The restore: the export imported into a new table with the live one's keys and indexes.
    live = ddb.describe_table(TableName=table)["Table"]
    copy = f"{table}-restored"
    creation: dict[str, Any] = {
        "TableName": copy,
        "KeySchema": live["KeySchema"],
        "AttributeDefinitions": live["AttributeDefinitions"],
        "BillingMode": "PAY_PER_REQUEST",
    }
    if live.get("GlobalSecondaryIndexes"):
        creation["GlobalSecondaryIndexes"] = [
            {"IndexName": g["IndexName"], "KeySchema": g["KeySchema"], "Projection": g["Projection"]}
            for g in live["GlobalSecondaryIndexes"]
        ]
    started = ddb.import_table(
        S3BucketSource={"S3Bucket": "sewerbill-backup-exports", "S3KeyPrefix": "billing"},
        InputFormat="DYNAMODB_JSON",
        InputCompressionType="GZIP",
        TableCreationParameters=creation,
    )["ImportTableDescription"]
    imported = _wait(
        lambda: ddb.describe_import(ImportArn=started["ImportArn"])["ImportTableDescription"], "ImportStatus"
    )
    assert imported["ImportStatus"] == "COMPLETED", imported
    assert imported["ImportedItemCount"] == done["ItemCount"]
    # the accounts, whose names hold quotes, come back whole (moto's own import cut them at
    # the first quote: table_import.py)
    accounts = tablerepair.compare(ddb, table, copy, ["ACCOUNTS#"])
    assert (accounts.same, len(accounts.missing), len(accounts.changed)) == (2, 0, 0), accounts.summary()
    assert "Ann O'Brien" in str(list(tablerepair.scan(ddb, copy)))

    # Compare only the ledgers: 3 missing, 1 changed, the later payment's entries newer.
    shown = _cli(rt, table, copy, "--pk-prefix", "LEDGER#")
    result = tablerepair.compare(ddb, table, copy, ["LEDGER#"])
    assert (len(result.missing), len(result.changed)) == (3, 1), shown
    assert len(result.newer) >= 1
    assert f"{result.same} same, 3 missing, 1 changed, {len(result.newer)} newer" in shown
    assert "nothing written" in shown
    assert [e for e in ledger(rt, "GR-1") if e not in before["GR-1"]] != []  # the damage shows

    # The repair: lost and damaged ledger entries back; the later payment kept.
    repaired = _cli(rt, table, copy, "--pk-prefix", "LEDGER#", "--write-back", "--overwrite-changed")
    assert "written back 3, overwritten 1, deleted 0" in repaired
    after = tablerepair.compare(ddb, table, copy, ["LEDGER#"])
    assert (len(after.missing), len(after.changed), len(after.newer)) == (0, 0, len(result.newer))
    later = [e for e in ledger(rt, "GR-1") if e not in before["GR-1"]]
    assert [e["amount"] for e in later if e["kind"] == "payment"] == ["-7.00"]
    assert [e for e in ledger(rt, "GR-1") if e not in later] == before["GR-1"]
    assert ledger(rt, "GR-2") == before["GR-2"]

    # and the stack goes on: a payment after the repair posts.
    rt.clock.advance(to=datetime(2028, 1, 13, 18, tzinfo=UTC))
    rt.upload(
        "UploadsBucket", "payments/2028-01-13.csv", LOCKBOX + "grafton-sewer,GR-2,LBX-6,2028-01-13,1.00\n"
    )
    assert [e["amount"] for e in ledger(rt, "GR-2") if e["kind"] == "payment"] == ["-20.00", "-5.00", "-1.00"]
    assert rt.status()["dead_letters"] == 0


def test_a_copy_with_another_key_is_refused(rt: LocalRuntime) -> None:
    ddb = rt.client("dynamodb")
    ddb.create_table(
        TableName="sewerbill-backup-other-keys",
        KeySchema=[{"AttributeName": "id", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "id", "AttributeType": "S"}],
        BillingMode="PAY_PER_REQUEST",
    )
    result = CliRunner().invoke(
        app,
        ["table", "compare", rt.resource("BillingTable"), "sewerbill-backup-other-keys"]
        + ["--endpoint-url", rt.endpoint_url],
    )
    assert result.exit_code != 0
    assert "not a copy of it" in result.output
