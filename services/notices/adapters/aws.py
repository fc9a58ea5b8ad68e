"""Notices' adapters: the notice log (DynamoDB), email (SES) and the mail room (S3).

Keys of the notices table:
- ``NOTICE#<tenant>#<account_id>`` / ``<notice_id>``: the notice log of an account
  (X-AUDIT; no TTL: notices are kept as long as the records, X-RETENTION);
- ``NOTICE#<tenant>#<account_id>`` lines carry their own event (``NoticeSent`` or
  ``NoticeFailed``: :func:`common.outbox.embedded_event`), published by the table's stream;
- ``MAILDAY#<date>`` / ``<zip>#<notice_id>``: a letter waiting for that day's print batch,
  with the address lines a print vendor needs (the sort key orders the batch by ZIP) and
  where its PDF is: an object of its own (``pending/<date>/<notice_id>.pdf``) or, for a
  chunk of bills, a part (``pages_offset``, ``pages_length``) of the chunk's one object
  (``pending/<date>/<content hash>.pdfs``);
- ``BATCH#<date>`` / ``BATCH``: the print batch once assembled (written once);
- ``PPBILL#<group>`` and ``PPHOLD``: Pleasant Prairie bills held for their combined
  document (see :class:`DynamoBillHolds`);
- ``WITHDRAWN#<tenant>#<account_id>`` / ``<bill_id>#<eligible_on>``: a disconnection
  eligibility billing withdrew (no disconnection notice goes for it);
- ``FAILED#<tenant>`` / ``<notice_id>``: a notice whose last send failed, for the
  failed-notices report (a Query, not a Scan: issue 31); written before the failed log
  line, removed after a retry's sent one (an entry whose log line is no longer failed is
  skipped by the report, so a crash between the two leaves the report right);
- ``NOTICEID#<tenant>`` / ``<notice_id>``: the account a notice id is logged under, so a
  clerk can open a notice by its id alone (written with the log line, never changed);
- ``BILLNO#<tenant>#<account_id>`` / ``<bill_id>``: the number printed on a bill, kept from
  its ``BillIssued``, so later letters quote the printed number, never the internal id.

The content of each sent notice is kept in the mail bucket under
``notices/<tenant>/<account_id>/<notice_id>.txt`` (and ``.pdf``; a bill's PDF is the one in
``bills/``), see :class:`S3NoticeCopies`; a bill delivered with its chunk keeps its text on
its log line (``text``) instead.
"""

from __future__ import annotations

import csv
import hashlib
import io
import shutil
import tempfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, replace
from datetime import date, datetime, timedelta
from decimal import Decimal
from email.mime.application import MIMEApplication
from email.mime.multipart import MIMEMultipart
from email.mime.text import MIMEText
from typing import Any, BinaryIO

from botocore.exceptions import BotoCoreError, ClientError

from billing.events import DisconnectionEligibilityWithdrawn
from common import csvsafe
from common.clock import Clock
from common.due_marks import DueMarks
from common.dynamo import (
    MAX_TRANSACT_ACTIONS,
    ConditionFailed,
    batch_get,
    from_item,
    get,
    key_of,
    put_if_absent,
    to_item,
    transact,
)
from common.errors import TransientError
from common.events import Event
from common.ids import key
from common.outbox import embedded_event, outbox_item
from notices.domain.combined import Claim, HeldBill
from notices.domain.delivery import Attachment, NoticeRecord, SendFailed
from notices.domain.documents import BillDocument, CombinedBillDocument, UsagePoint
from notices.domain.model import NoticeRequest, Recipient
from notices.events import NoticeFailed, NoticeSent, PrintBatchAssembled


def _record_item(record: NoticeRecord) -> dict[str, Any]:
    return {
        "pk": key("NOTICE", record.tenant, record.account_id),
        "sk": record.notice_id,
        "notice_id": record.notice_id,
        "tenant": record.tenant,
        "account_id": record.account_id,
        "rule": record.rule,
        "channel": record.channel,
        "recipient_role": record.recipient_role,
        "recipient_name": record.recipient_name,
        "trigger": record.trigger,
        "subject": record.subject,
        "status": record.status,
        "at": record.at.isoformat(),
        "content_sha256": record.content_sha256,
        "reference": record.reference,
        "attempts": record.attempts,
        "error": record.error,
        "text_key": record.text_key,
        "pdf_key": record.pdf_key,
        "text": record.text or None,  # None: not written
    }


def _record_of(item: dict[str, Any]) -> NoticeRecord:
    return NoticeRecord(
        notice_id=item["notice_id"],
        tenant=item["tenant"],
        account_id=item["account_id"],
        rule=item["rule"],
        channel=item["channel"],
        recipient_role=item["recipient_role"],
        recipient_name=item["recipient_name"],
        trigger=item["trigger"],
        subject=item["subject"],
        status=item["status"],
        at=datetime.fromisoformat(item["at"]),
        content_sha256=item["content_sha256"],
        reference=item.get("reference", ""),
        attempts=int(item.get("attempts", 1)),
        error=item.get("error", ""),
        text_key=item.get("text_key", ""),
        pdf_key=item.get("pdf_key", ""),
        text=item.get("text", ""),
    )


class DynamoNoticeLog:
    """The notice log. A log line carries its own event (``NoticeSent``, or ``NoticeFailed``
    of its attempt: :func:`common.outbox.embedded_event`), so recording a notice and
    publishing its event are one item written once; the table's stream publishes it."""

    def __init__(self, client: Any, table: str, clock: Clock) -> None:
        self._client = client
        self._table = table
        self._clock = clock

    def get(self, tenant: str, account_id: str, notice_id: str) -> NoticeRecord | None:
        item = get(self._client, self._table, key("NOTICE", tenant, account_id), notice_id)
        return _record_of(item) if item else None

    def get_many(self, keys: Iterable[tuple[str, str, str]]) -> dict[str, NoticeRecord]:
        """The log lines of ``(tenant, account_id, notice_id)`` found, by notice id (BatchGetItem,
        100 keys a call)."""
        found = batch_get(self._client, self._table, ((key("NOTICE", t, a), n) for t, a, n in keys))
        return {item["sk"]: _record_of(item) for item in found.values()}

    def item(self, record: NoticeRecord) -> dict[str, Any]:
        """The log line of ``record`` with its event."""
        return {**_record_item(record), **embedded_event(self._event_of(record))}

    def put_action(self, record: NoticeRecord) -> dict[str, Any]:
        """The write of ``record``'s log line: a sent notice is final (only a pending or a
        failed one may be overwritten)."""
        return {
            "TableName": self._table,
            "Item": to_item(self.item(record)),
            "ConditionExpression": "attribute_not_exists(pk) OR #s <> :sent",
            "ExpressionAttributeNames": {"#s": "status"},
            "ExpressionAttributeValues": {":sent": {"S": "sent"}},
        }

    @staticmethod
    def where_item(tenant: str, account_id: str, notice_id: str) -> dict[str, Any]:
        """Where the notice id is logged (the same every time: an idempotent put)."""
        return {"pk": key("NOTICEID", tenant), "sk": notice_id, "account_id": account_id}

    def mark_failed(self, record: NoticeRecord) -> None:
        """The failed-notices report's entry of ``record`` (written before its failed log
        line: see the module doc)."""
        self._client.put_item(
            TableName=self._table,
            Item=to_item(
                {"pk": key("FAILED", record.tenant), "sk": record.notice_id, "account_id": record.account_id}
            ),
        )

    def clear_failed(self, record: NoticeRecord) -> None:
        """A retry sent ``record``: an earlier attempt's report entry, if any, goes (after
        the sent log line; a crash between the two leaves an entry the report skips)."""
        self._client.delete_item(
            TableName=self._table, Key=key_of(key("FAILED", record.tenant), record.notice_id)
        )

    def record(self, record: NoticeRecord) -> None:
        if record.status == "failed":
            self.mark_failed(record)
        # Where the id is logged first: a crash after it leaves the notice unsent, to be
        # sent and logged on the redelivery; a crash after the log line leaves nothing to do.
        where = self.where_item(record.tenant, record.account_id, record.notice_id)
        self._client.put_item(TableName=self._table, Item=to_item(where))
        try:
            self._client.put_item(**self.put_action(record))
        except ClientError as exc:
            if exc.response["Error"]["Code"] != "ConditionalCheckFailedException":
                raise
        if record.status == "sent" and record.attempts > 1:
            self.clear_failed(record)

    def find(self, tenant: str, notice_id: str) -> NoticeRecord | None:
        """A notice of ``tenant`` by its id alone (None for an unknown id or another tenant's)."""
        where = get(self._client, self._table, key("NOTICEID", tenant), notice_id)
        return self.get(tenant, where["account_id"], notice_id) if where else None

    def _event_of(self, record: NoticeRecord) -> Event:
        now = self._clock.now()
        if record.status == "sent":
            return NoticeSent(
                event_id=record.notice_id,
                occurred_at=now,
                tenant=record.tenant,
                account_id=record.account_id,
                notice_id=record.notice_id,
                rule=record.rule,
                channel=record.channel,
                recipient_role=record.recipient_role,
                reference=record.reference,
            )
        return NoticeFailed(
            event_id=f"{record.notice_id}-failed-{record.attempts}",
            occurred_at=now,
            tenant=record.tenant,
            account_id=record.account_id,
            notice_id=record.notice_id,
            rule=record.rule,
            channel=record.channel,
            attempts=record.attempts,
            error=record.error,
        )

    def of_account(self, tenant: str, account_id: str) -> list[NoticeRecord]:
        pages = self._client.get_paginator("query").paginate(
            TableName=self._table,
            KeyConditionExpression="pk = :pk",
            ExpressionAttributeValues={":pk": {"S": key("NOTICE", tenant, account_id)}},
        )
        records = [_record_of(from_item(i)) for page in pages for i in page["Items"]]
        return sorted(records, key=lambda r: (r.at, r.notice_id))

    def failed(self, tenant: str) -> list[NoticeRecord]:
        """The tenant's notices whose last send failed: a Query of its ``FAILED#`` entries and
        a BatchGetItem of their log lines, those still failed kept (issue 31: no Scan)."""
        pages = self._client.get_paginator("query").paginate(
            TableName=self._table,
            KeyConditionExpression="pk = :pk",
            ExpressionAttributeValues={":pk": {"S": key("FAILED", tenant)}},
        )
        keys = [
            (key("NOTICE", tenant, i["account_id"]["S"]), i["sk"]["S"])
            for page in pages
            for i in page["Items"]
        ]
        found = batch_get(self._client, self._table, keys)
        records = [_record_of(found[k]) for k in keys if k in found]
        return sorted((r for r in records if r.status == "failed"), key=lambda r: (r.at, r.notice_id))


class SesEmailSender:
    def __init__(self, client: Any, sender: str) -> None:
        self._ses = client
        self._sender = sender

    def send(self, *, to: str, subject: str, text: str, html: str, attachments: list[Attachment]) -> str:
        message = MIMEMultipart("mixed")
        message["Subject"] = subject
        message["From"] = self._sender
        message["To"] = to
        body = MIMEMultipart("alternative")
        body.attach(MIMEText(text, "plain", "utf-8"))
        body.attach(MIMEText(html, "html", "utf-8"))
        message.attach(body)
        for attachment in attachments:
            part = MIMEApplication(attachment.content, _subtype="pdf")
            part.add_header("Content-Disposition", "attachment", filename=attachment.filename)
            message.attach(part)
        try:
            response = self._ses.send_raw_email(
                Source=self._sender, Destinations=[to], RawMessage={"Data": message.as_bytes()}
            )
        except (ClientError, BotoCoreError) as exc:
            raise SendFailed(f"SES refused the email to {to}: {exc}") from exc
        return str(response["MessageId"])


MANIFEST_COLUMNS = (
    "sequence",
    "zip",
    "name",
    "address_1",
    "address_2",
    "address_3",
    "account_id",
    "rule",
    "notice_id",
    "pages_key",
)


class S3MailRoom:
    """Letters for the day's print batch: each PDF in the mail bucket, its address in the table."""

    def __init__(self, s3: Any, bucket: str, ddb: Any, table: str, clock: Clock) -> None:
        self._s3 = s3
        self._bucket = bucket
        self._ddb = ddb
        self._table = table
        self._clock = clock
        self.marks = DueMarks(ddb, table)

    def enqueue(self, *, day: date, record: NoticeRecord, request: NoticeRequest, pdf: bytes) -> str:
        object_key = f"pending/{day.isoformat()}/{record.notice_id}.pdf"
        self._s3.put_object(Bucket=self._bucket, Key=object_key, Body=pdf, ContentType="application/pdf")
        item = self._letter_item(day, record, request, object_key)
        self._ddb.put_item(TableName=self._table, Item=to_item(item))
        # The print run of the next morning assembles this day's letters (``common.due``):
        # the day is marked once a container; the run drops it only after that morning.
        self.marks.add_once(day + timedelta(days=1))
        return object_key

    def letters_of(
        self, day: date, letters: list[tuple[NoticeRecord, NoticeRequest, bytes]]
    ) -> list[tuple[NoticeRecord, dict[str, Any]]]:
        """A chunk's letters for ``day``'s print batch in one object: their PDFs one after
        another (one PutObject), each letter's item naming its object and where in it its
        pages are. Returns each letter's log line (its reference: that object) and item,
        for the caller to write together (:meth:`DynamoBillDeliveries.record_letters`), then
        :meth:`mark`. The object's key is its content's hash: an object is never rewritten
        with other content, so a line written by an earlier delivery still finds its pages."""
        body = b"".join(pdf for _, _, pdf in letters)
        object_key = f"pending/{day.isoformat()}/{hashlib.sha256(body).hexdigest()[:32]}.pdfs"
        self._s3.put_object(
            Bucket=self._bucket, Key=object_key, Body=body, ContentType="application/octet-stream"
        )
        out: list[tuple[NoticeRecord, dict[str, Any]]] = []
        offset = 0
        for record, request, pdf in letters:
            done = replace(record, reference=object_key)
            item = self._letter_item(day, done, request, object_key)
            out.append((done, {**item, "pages_offset": offset, "pages_length": len(pdf)}))
            offset += len(pdf)
        return out

    def mark(self, day: date) -> None:
        """The print run of the morning after ``day`` has letters to assemble (``common.due``)."""
        self.marks.add_once(day + timedelta(days=1))

    def _letter_item(
        self, day: date, record: NoticeRecord, request: NoticeRequest, pages_key: str
    ) -> dict[str, Any]:
        return {
            "pk": key("MAILDAY", day.isoformat()),
            "sk": f"{request.recipient.zip or '00000'}#{record.notice_id}",
            "zip": request.recipient.zip,
            "name": request.recipient.name,
            "address_lines": list(request.recipient.address_lines)[:3],
            "account_id": record.account_id,
            "rule": record.rule,
            "notice_id": record.notice_id,
            "pages_key": pages_key,
        }

    def pages(self, letters: Iterable[dict[str, Any]]) -> Iterator[bytes]:
        """Each letter's PDF, in the order given: a letter kept with others in one object
        (``pages_offset``) is cut from that object, read once into a temporary file (on disk:
        a day of letters is never held in memory), a letter of its own is read alone."""
        with tempfile.TemporaryDirectory() as kept:
            files: dict[str, BinaryIO] = {}
            try:
                for letter in letters:
                    if "pages_offset" not in letter:
                        yield self.pdf(letter["pages_key"])
                        continue
                    object_key = letter["pages_key"]
                    if object_key not in files:
                        files[object_key] = open(f"{kept}/{len(files)}", "w+b")  # noqa: SIM115 - closed below
                        body = self._s3.get_object(Bucket=self._bucket, Key=object_key)["Body"]
                        shutil.copyfileobj(body, files[object_key], 2**20)
                    kept_file = files[object_key]
                    kept_file.seek(int(letter["pages_offset"]))
                    yield kept_file.read(int(letter["pages_length"]))
            finally:
                for kept_file in files.values():
                    kept_file.close()

    def letters(self, day: date) -> Iterator[dict[str, Any]]:
        """The day's letters sorted by ZIP (the sort key)."""
        pages = self._ddb.get_paginator("query").paginate(
            TableName=self._table,
            KeyConditionExpression="pk = :pk",
            ExpressionAttributeValues={":pk": {"S": key("MAILDAY", day.isoformat())}},
        )
        for page in pages:
            for item in page["Items"]:
                yield from_item(item)

    def pdf(self, object_key: str) -> bytes:
        data: bytes = self._s3.get_object(Bucket=self._bucket, Key=object_key)["Body"].read()
        return data

    def batch_exists(self, day: date) -> bool:
        return get(self._ddb, self._table, key("BATCH", day.isoformat()), "BATCH") is not None

    def store_batch(self, day: date, pdf: BinaryIO, manifest: str, count: int) -> tuple[str, str]:
        prefix = f"batches/{day.isoformat()}"
        pdf_key, manifest_key = f"{prefix}/batch.pdf", f"{prefix}/manifest.csv"
        # Multipart for a large batch, read from the spooled file part by part.
        self._s3.upload_fileobj(pdf, self._bucket, pdf_key, ExtraArgs={"ContentType": "application/pdf"})
        self._s3.put_object(
            Bucket=self._bucket, Key=manifest_key, Body=manifest.encode(), ContentType="text/csv"
        )
        batch = {"pk": key("BATCH", day.isoformat()), "sk": "BATCH", "letters": count, "pdf_key": pdf_key}
        self._ddb.put_item(TableName=self._table, Item=to_item({**batch, "manifest_key": manifest_key}))
        # Announced through the outbox (claim check: the event names the objects, once per day).
        event = PrintBatchAssembled(
            event_id=f"print-batch-{day.isoformat()}",
            occurred_at=self._clock.now(),
            day=day,
            letters=count,
            bucket=self._bucket,
            pdf_key=pdf_key,
            manifest_key=manifest_key,
        )
        try:
            self._ddb.put_item(**put_if_absent(self._table, outbox_item(event, now=self._clock.now()))["Put"])
        except ClientError as exc:
            if exc.response["Error"]["Code"] != "ConditionalCheckFailedException":
                raise
        return pdf_key, manifest_key


def manifest_csv(letters: list[dict[str, Any]]) -> str:
    """The print room's manifest, one line a letter; its cells (names and addresses given by
    customers and staff) are made safe to open in a spreadsheet (:mod:`common.csvsafe`)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(MANIFEST_COLUMNS)
    for sequence, letter in enumerate(letters, start=1):
        lines = [*letter.get("address_lines", []), "", "", ""][:3]
        row = [sequence, letter.get("zip", ""), letter["name"], *lines, letter["account_id"], letter["rule"]]
        writer.writerow(csvsafe.row((*row, letter["notice_id"], letter["pages_key"])))
    return out.getvalue()


USAGE_KEPT = 60  # periods of billed usage kept per account (5 years of monthly bills)


class DynamoContacts:
    """Notices' own projection of addressees and billed usage, kept from billing's events.

    ``CONTACT#<tenant>#<account_id>`` / ``RECIPIENT`` (with the billed usage, a list of
    periods); ``PARCEL#<tenant>#<parcel_id>`` / ``OWNER``;
    ``ANNUAL#<tenant>#<account_id>`` / ``<year>`` once the annual rate notice went out.
    """

    def __init__(self, client: Any, table: str) -> None:
        self._client = client
        self._table = table

    def _put(self, item: dict[str, Any]) -> None:
        self._client.put_item(TableName=self._table, Item=to_item(item))

    def remember_bill(
        self,
        tenant: str,
        account_id: str,
        recipient: Recipient,
        parcel_id: str | None,
        period_start: date,
        volume_gal: Decimal,
    ) -> list[UsagePoint]:
        """The addressee as of this bill and the period's use, kept in the account's one
        contact item (a GetItem and a PutItem conditional on the version read, retried on a
        concurrent write): the last ``USAGE_KEPT`` periods, one point a period however often
        a bill arrives. Returns the last 13 for the bill's usage chart."""
        pk = key("CONTACT", tenant, account_id)
        for _attempt in range(5):
            item = get(self._client, self._table, pk, "RECIPIENT") or {}
            version = int(item.get("version", 0))
            by_period = {p["period_start"]: p["volume_gal"] for p in item.get("usage") or ()}
            by_period[period_start.isoformat()] = str(volume_gal)
            usage = [{"period_start": k, "volume_gal": v} for k, v in sorted(by_period.items())][-USAGE_KEPT:]
            try:
                self._client.put_item(
                    TableName=self._table,
                    Item=to_item(
                        {
                            "pk": pk,
                            "sk": "RECIPIENT",
                            "recipient": recipient.model_dump_json(),
                            "parcel_id": parcel_id or "",
                            "usage": usage,
                            "version": version + 1,
                        }
                    ),
                    ConditionExpression="attribute_not_exists(pk) OR version = :v",
                    ExpressionAttributeValues={":v": {"N": str(version)}},
                )
            except ClientError as exc:
                if exc.response["Error"]["Code"] != "ConditionalCheckFailedException":
                    raise
                continue  # another bill of the account was kept meanwhile: read again
            return [
                UsagePoint(
                    period_start=date.fromisoformat(p["period_start"]), volume_gal=Decimal(p["volume_gal"])
                )
                for p in usage[-13:]
            ]
        raise TransientError(f"the contact item of {account_id} kept changing while a bill was kept")

    def remember_owner(self, tenant: str, parcel_id: str, owner: Recipient, account_id: str) -> None:
        self._put(
            {
                "pk": key("PARCEL", tenant, parcel_id),
                "sk": "OWNER",
                "recipient": owner.model_dump_json(),
                "account_id": account_id,
            }
        )

    def recipient(self, tenant: str, account_id: str) -> Recipient | None:
        item = get(self._client, self._table, key("CONTACT", tenant, account_id), "RECIPIENT")
        return Recipient.model_validate_json(item["recipient"]) if item else None

    def owner(self, tenant: str, parcel_id: str) -> tuple[Recipient, str] | None:
        item = get(self._client, self._table, key("PARCEL", tenant, parcel_id), "OWNER")
        return (Recipient.model_validate_json(item["recipient"]), item["account_id"]) if item else None

    def annual_notice_due(self, tenant: str, account_id: str, year: int) -> bool:
        return get(self._client, self._table, key("ANNUAL", tenant, account_id), str(year)) is None

    def annual_notice_sent(self, tenant: str, account_id: str, year: int) -> None:
        self._put({"pk": key("ANNUAL", tenant, account_id), "sk": str(year)})

    def remember_bill_number(self, tenant: str, account_id: str, bill_id: str, number: str) -> None:
        self._put({"pk": key("BILLNO", tenant, account_id), "sk": bill_id, "number": number})

    def bill_number(self, tenant: str, account_id: str, bill_id: str) -> str | None:
        item = get(self._client, self._table, key("BILLNO", tenant, account_id), bill_id)
        return str(item["number"]) if item else None

    def keep_withdrawal(self, event: DisconnectionEligibilityWithdrawn) -> None:
        """``WITHDRAWN#<tenant>#<account_id>`` / ``<bill_id>#<eligible_on>``: the withdrawal's
        event (the same event again rewrites the same item)."""
        self._put(
            {
                "pk": key("WITHDRAWN", event.tenant, event.account_id),
                "sk": f"{event.bill_id}#{event.eligible_on.isoformat()}",
                "event": event.model_dump_json(),
            }
        )

    def withdrawal(
        self, tenant: str, account_id: str, bill_id: str, eligible_on: date
    ) -> DisconnectionEligibilityWithdrawn | None:
        item = get(
            self._client,
            self._table,
            key("WITHDRAWN", tenant, account_id),
            f"{bill_id}#{eligible_on.isoformat()}",
        )
        return DisconnectionEligibilityWithdrawn.model_validate_json(item["event"]) if item else None


@dataclass(frozen=True)
class ContactState:
    """An account's contact item as read: its billed usage (period start -> gallons, as
    stored) and the version a write of it is conditional on (0: none yet)."""

    usage: dict[str, str]
    version: int


class DynamoBillDeliveries:
    """The table's side of delivering a chunk of bills at once: one BatchGetItem series for
    the chunk's contact items and log lines, one TransactWriteItems series for what the chunk
    keeps before it sends (contacts, printed numbers, owners, where each notice id is logged)
    and one for its letters with their log lines (each 100 actions a call)."""

    def __init__(self, client: Any, table: str, log: DynamoNoticeLog) -> None:
        self._client = client
        self._table = table
        self._log = log

    def read(
        self, accounts: Iterable[tuple[str, str]], notices: Iterable[tuple[str, str, str]]
    ) -> tuple[dict[tuple[str, str], ContactState], dict[str, NoticeRecord]]:
        """The accounts' contact items and the notices' log lines (by notice id) found."""
        contact_keys = {key("CONTACT", t, a): (t, a) for t, a in accounts}
        wanted = [(pk, "RECIPIENT") for pk in contact_keys]
        wanted += [(key("NOTICE", t, a), n) for t, a, n in notices]
        found = batch_get(self._client, self._table, wanted)
        contacts = {}
        for pk, account in contact_keys.items():
            item = found.get((pk, "RECIPIENT"))
            usage = {p["period_start"]: p["volume_gal"] for p in (item or {}).get("usage") or ()}
            contacts[account] = ContactState(usage=usage, version=int((item or {}).get("version", 0)))
        records = {sk: _record_of(item) for (pk, sk), item in found.items() if pk.startswith("NOTICE#")}
        return contacts, records

    def keep(
        self,
        contacts: Iterable[tuple[str, str, Recipient, str | None, dict[str, str], int]],
        numbers: Iterable[tuple[str, str, str, str]],
        owners: Iterable[tuple[str, str, Recipient, str]],
        where: Iterable[tuple[str, str, str]],
    ) -> None:
        """Before the chunk sends: each account's contact item ``(tenant, account, recipient,
        parcel, usage, version read)``, conditional on the version read (a concurrent bill of
        the account makes the chunk retried: :class:`TransientError`), the bills' printed
        numbers ``(tenant, account, bill, number)``, the parcels' owners and where each notice
        id is logged. All of them idempotent: a redelivery writes the same again."""
        actions: list[dict[str, Any]] = []
        for tenant, account_id, recipient, parcel_id, usage, version in contacts:
            points = [{"period_start": k, "volume_gal": v} for k, v in sorted(usage.items())][-USAGE_KEPT:]
            item = {
                "pk": key("CONTACT", tenant, account_id),
                "sk": "RECIPIENT",
                "recipient": recipient.model_dump_json(),
                "parcel_id": parcel_id or "",
                "usage": points,
                "version": version + 1,
            }
            actions.append(
                {
                    "Put": {
                        "TableName": self._table,
                        "Item": to_item(item),
                        "ConditionExpression": "attribute_not_exists(pk) OR version = :v",
                        "ExpressionAttributeValues": {":v": {"N": str(version)}},
                    }
                }
            )
        plain = [
            *({"pk": key("BILLNO", t, a), "sk": b, "number": n} for t, a, b, n in numbers),
            *(
                {"pk": key("PARCEL", t, p), "sk": "OWNER", "recipient": o.model_dump_json(), "account_id": a}
                for t, p, o, a in owners
            ),
            *(DynamoNoticeLog.where_item(*w) for w in where),
        ]
        actions += [{"Put": {"TableName": self._table, "Item": to_item(item)}} for item in plain]
        for start in range(0, len(actions), MAX_TRANSACT_ACTIONS):
            try:
                transact(self._client, actions[start : start + MAX_TRANSACT_ACTIONS])
            except ConditionFailed as exc:
                raise TransientError("an account's contact item changed while its bills were kept") from exc

    def record_sent(self, record: NoticeRecord) -> None:
        """One notice's log line with its event (an email's, right after its send); a
        failed send's line has its failed-notices report entry first."""
        if record.status == "failed":
            self._log.mark_failed(record)
        try:
            self._client.put_item(**self._log.put_action(record))
        except ClientError as exc:
            if exc.response["Error"]["Code"] != "ConditionalCheckFailedException":
                raise
        if record.status == "sent" and record.attempts > 1:
            self._log.clear_failed(record)

    def record_letters(self, letters: list[tuple[NoticeRecord, dict[str, Any]]]) -> None:
        """Letters into the day's mail with their log lines, each letter's two items in the
        same transaction (50 letters a call). A log line found sent already (a concurrent
        delivery of the same bill) cancels its transaction: its letters are then written one
        by one, the sent line kept as it is."""
        per_call = MAX_TRANSACT_ACTIONS // 2
        for start in range(0, len(letters), per_call):
            part = letters[start : start + per_call]
            actions: list[dict[str, Any]] = []
            for record, mailed in part:
                actions.append({"Put": self._log.put_action(record)})
                actions.append({"Put": {"TableName": self._table, "Item": to_item(mailed)}})
            try:
                transact(self._client, actions)
            except ConditionFailed:
                for record, mailed in part:
                    self._client.put_item(TableName=self._table, Item=to_item(mailed))
                    self.record_sent(record)


class S3NoticeCopies:
    """The content of each sent notice as sent: its text, and its PDF (a letter's; a bill's
    is kept by :class:`S3BillArchive`), in the mail bucket under ``notices/``. Objects are
    written before the log line that points to them and are never rewritten with other
    content (a notice id is sent once)."""

    def __init__(self, s3: Any, bucket: str) -> None:
        self._s3 = s3
        self._bucket = bucket

    def keep(self, record: NoticeRecord, text: str, pdf: bytes | None) -> tuple[str, str]:
        stem = f"notices/{record.tenant}/{record.account_id}/{record.notice_id}"
        self._s3.put_object(
            Bucket=self._bucket,
            Key=f"{stem}.txt",
            Body=text.encode(),
            ContentType="text/plain; charset=utf-8",
        )
        if pdf is None:
            return f"{stem}.txt", ""
        self._s3.put_object(Bucket=self._bucket, Key=f"{stem}.pdf", Body=pdf, ContentType="application/pdf")
        return f"{stem}.txt", f"{stem}.pdf"

    def read(self, object_key: str) -> bytes | None:
        """An object kept here or by the bill archive (None when missing)."""
        try:
            body: bytes = self._s3.get_object(Bucket=self._bucket, Key=object_key)["Body"].read()
        except ClientError as exc:
            if exc.response["Error"]["Code"] in ("NoSuchKey", "404"):
                return None
            raise
        return body


class S3BillArchive:
    """Every bill PDF as sent, kept in the mail bucket under ``bills/<tenant>/<account>/``."""

    def __init__(self, s3: Any, bucket: str) -> None:
        self._s3 = s3
        self._bucket = bucket

    @staticmethod
    def key(tenant: str, account_id: str, bill_id: str) -> str:
        return f"bills/{tenant}/{account_id}/{bill_id}.pdf"

    def store(self, bill: BillDocument | CombinedBillDocument, pdf: bytes) -> str:
        """Kept under each bill it carries: a combined document is each account's copy."""
        keys = [self.key(s.tenant, s.account_id, s.bill_id) for s in bill.sections]
        for object_key in keys:
            self._s3.put_object(Bucket=self._bucket, Key=object_key, Body=pdf, ContentType="application/pdf")
        return keys[0]

    def fetch(self, tenant: str, account_id: str, bill_id: str) -> bytes | None:
        try:
            body: bytes = self._s3.get_object(Bucket=self._bucket, Key=self.key(tenant, account_id, bill_id))[
                "Body"
            ].read()
        except ClientError as exc:
            if exc.response["Error"]["Code"] in ("NoSuchKey", "404"):
                return None
            raise
        return body


class DynamoBillHolds:
    """Held Pleasant Prairie bills waiting for their combined document (PP-CWU-BILLING).

    ``PPBILL#<group>`` / ``MEMBER#<tenant>/<account>/<bill>``: a held bill (its document,
    addressee and trigger); ``PPBILL#<group>`` / ``CLAIM``: the group's document, decided
    once (a conditional put); ``PPHOLD`` / ``<release day>#<group>``: the groups still to be
    released, in release-day order (one Query finds every group due, however late the run).
    """

    def __init__(self, client: Any, table: str) -> None:
        self._client = client
        self._table = table
        self.marks = DueMarks(client, table)

    def hold(self, key_: str, bill: HeldBill) -> None:
        self._client.put_item(
            TableName=self._table,
            Item=to_item(
                {
                    "pk": key("PPBILL", key_),
                    "sk": f"MEMBER#{bill.member}",
                    "document": bill.document.model_dump_json(),
                    "recipient": bill.recipient.model_dump_json(),
                    "trigger": bill.trigger,
                }
            ),
        )
        self._client.put_item(
            TableName=self._table,
            Item=to_item({"pk": "PPHOLD", "sk": f"{bill.release_on.isoformat()}#{key_}", "group": key_}),
        )
        # Its release morning for the print run (``common.due``), after the item, every time:
        # a hold may come for a day a run has already dropped (a bill dated in the past).
        self.marks.add([bill.release_on])

    def group(self, key_: str) -> tuple[list[HeldBill], Claim | None]:
        pages = self._client.get_paginator("query").paginate(
            TableName=self._table,
            KeyConditionExpression="pk = :pk",
            ExpressionAttributeValues={":pk": {"S": key("PPBILL", key_)}},
            ConsistentRead=True,
        )
        bills: list[HeldBill] = []
        claim: Claim | None = None
        for page in pages:
            for raw in page["Items"]:
                item = from_item(raw)
                if item["sk"] == "CLAIM":
                    claim = Claim(members=tuple(item["members"]), by=item["by"])
                else:
                    bills.append(
                        HeldBill(
                            document=BillDocument.model_validate_json(item["document"]),
                            recipient=Recipient.model_validate_json(item["recipient"]),
                            trigger=item["trigger"],
                        )
                    )
        return bills, claim

    def claim(self, key_: str, claim: Claim) -> Claim:
        item: dict[str, Any] = {
            "pk": key("PPBILL", key_),
            "sk": "CLAIM",
            "members": list(claim.members),
            "by": claim.by,
        }
        try:
            self._client.put_item(
                TableName=self._table,
                Item=to_item(item),
                ConditionExpression="attribute_not_exists(pk)",
            )
        except ClientError as exc:
            if exc.response["Error"]["Code"] != "ConditionalCheckFailedException":
                raise
            found = get(self._client, self._table, key("PPBILL", key_), "CLAIM") or item
            return Claim(members=tuple(found["members"]), by=str(found["by"]))
        return claim

    def due(self, day: date) -> list[str]:
        pages = self._client.get_paginator("query").paginate(
            TableName=self._table,
            KeyConditionExpression="pk = :pk AND sk < :after",
            ExpressionAttributeValues={
                ":pk": {"S": "PPHOLD"},
                ":after": {"S": (day + timedelta(days=1)).isoformat()},
            },
            ConsistentRead=True,
        )
        return list(dict.fromkeys(from_item(i)["group"] for page in pages for i in page["Items"]))

    def released(self, key_: str, days: Iterable[date]) -> None:
        for day in sorted(set(days)):
            self._client.delete_item(
                TableName=self._table, Key={"pk": {"S": "PPHOLD"}, "sk": {"S": f"{day.isoformat()}#{key_}"}}
            )
