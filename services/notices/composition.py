"""Notices' composition root: builds the real adapters once per container (STYLE 3)."""

from __future__ import annotations

from functools import partial
from typing import Any

import boto3

from common.config import RuntimeClock, cold_start, load
from common.dynamo import plain_answers_client
from common.handling import RejectionSink, rejections_for
from common.outbox import OutboxPublisher
from common.tariff_files import load_tariff_book
from common.tariffs import TariffBook
from notices import rendering
from notices.adapters.aws import (
    DynamoBillDeliveries,
    DynamoBillHolds,
    DynamoContacts,
    DynamoNoticeLog,
    S3BillArchive,
    S3MailRoom,
    S3NoticeCopies,
    SesEmailSender,
    manifest_csv,
)
from notices.config import ApiConfig, NoticesConfig, PublishOutboxConfig
from notices.domain.delivery import Rendered
from notices.domain.documents import BillDocument, CombinedBillDocument
from notices.domain.model import NoticeRequest
from notices.domain.print_batch import PrintBatch, assemble_print_batch


class Renderer:
    def render(self, request: NoticeRequest) -> Rendered:
        done = rendering.render(request)
        return Rendered(subject=done.subject, text=done.text, html=done.html)

    def letter(self, request: NoticeRequest, text: str) -> bytes:
        return rendering.letter_pdf(request, text)

    def bill(self, document: BillDocument | CombinedBillDocument) -> bytes:
        return rendering.bill_pdf(document)


@cold_start
def config() -> NoticesConfig:
    return load(NoticesConfig)


@cold_start
def clock() -> RuntimeClock:
    return RuntimeClock()


@cold_start
def notice_log() -> DynamoNoticeLog:
    return DynamoNoticeLog(boto3.client("dynamodb"), config().table_name, clock())


@cold_start
def contacts() -> DynamoContacts:
    return DynamoContacts(boto3.client("dynamodb"), config().table_name)


@cold_start
def bill_holds() -> DynamoBillHolds:
    return DynamoBillHolds(plain_answers_client(), config().table_name)


@cold_start
def mail_room() -> S3MailRoom:
    return S3MailRoom(
        boto3.client("s3"), config().mail_bucket, boto3.client("dynamodb"), config().table_name, clock()
    )


@cold_start
def ports() -> dict[str, Any]:
    return {
        "log": notice_log(),
        "email": SesEmailSender(boto3.client("ses"), config().sender_email),
        "mail": mail_room(),
        "renderer": Renderer(),
        "archive": S3BillArchive(boto3.client("s3"), config().mail_bucket),
        "copies": S3NoticeCopies(boto3.client("s3"), config().mail_bucket),
    }


@cold_start
def bill_ports() -> dict[str, Any]:
    """The ports of a chunk of bills delivered at once (``notices.app.delivery.deliver_bills``)."""
    found = ports()
    return {
        "bills": DynamoBillDeliveries(boto3.client("dynamodb"), config().table_name, notice_log()),
        **{name: found[name] for name in ("renderer", "archive", "email", "mail")},
    }


@cold_start
def tariff_book() -> TariffBook:
    return load_tariff_book(config().tariffs_dir)


@cold_start
def print_batch() -> partial[PrintBatch | None]:
    return partial(
        assemble_print_batch, mail=mail_room(), merge=rendering.spooled_batch, manifest=manifest_csv
    )


@cold_start
def rejections() -> RejectionSink:
    return rejections_for("notices")


@cold_start
def outbox_publisher() -> OutboxPublisher:
    return OutboxPublisher(boto3.client("events"), load(PublishOutboxConfig).event_bus_name)


@cold_start
def api_log() -> DynamoNoticeLog:
    return DynamoNoticeLog(boto3.client("dynamodb"), load(ApiConfig).table_name, RuntimeClock())


@cold_start
def api_archive() -> S3BillArchive:
    return S3BillArchive(boto3.client("s3"), load(ApiConfig).mail_bucket)


@cold_start
def api_copies() -> S3NoticeCopies:
    return S3NoticeCopies(boto3.client("s3"), load(ApiConfig).mail_bucket)
