"""The daily print-batch schedule fired: release the Pleasant Prairie bills whose partner
did not come by their release day (PP-CWU-BILLING), then assemble yesterday's mailed notices
into one PDF and a manifest sorted by ZIP for the print vendor (once per day), after the
batches of any earlier morning whose run never came. A morning with
neither costs one read: the daily mark (``common.due``), to which each letter adds its
morning (once a container) and each hold its release day.

Trigger: EventBridge Scheduler (daily) -> SQS -> here; body ``{"scheduled_time": ...}``.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any
from zoneinfo import ZoneInfo

from aws_lambda_powertools.utilities.batch.types import PartialItemFailureResponse
from aws_lambda_powertools.utilities.data_classes.sqs_event import SQSRecord
from pydantic import AwareDatetime, BaseModel, ValidationError

from common.due import next_due
from common.errors import TransientError
from common.handling import consume_sqs
from common.messages import MalformedMessage, first_error
from common.observability import Counts, count, logger, observed
from notices import composition
from notices.app.delivery import release_held_bills


class BatchScheduled(BaseModel):
    scheduled_time: AwareDatetime


def record_handler(record: SQSRecord) -> None:
    try:
        request = BatchScheduled.model_validate_json(record.body)
    except ValidationError as exc:
        raise MalformedMessage(f"print batch input: {first_error(exc)}") from None
    # The batch at dawn collects the letters of the utility's previous local day.
    morning = request.scheduled_time.astimezone(ZoneInfo("America/Chicago")).date()
    day = morning - timedelta(days=1)
    # A morning with no letter and no hold due reads one mark (the writers mark their days).
    marks = composition.bill_holds().marks
    mark = marks.read()
    if mark is not None and not mark.due(morning):
        return
    # Held bills released first, so their letters make this batch (a retried run's, the next).
    released = release_held_bills(
        day,
        holds=composition.bill_holds(),
        ports=composition.ports(),
        clock=composition.clock(),
        mail_day=lambda: day + timedelta(days=1) if composition.mail_room().batch_exists(day) else day,
        attempt=int(record.attributes.approximate_receive_count or 1),
    )
    # A morning whose run never came (its retries spent) left its letters unassembled: the
    # mark still holds that morning, so its day's batch is assembled now, before this one.
    missed = sorted(m - timedelta(days=1) for m in (mark.pending if mark else ()) if m < morning)
    for batch_day in (*missed, day):
        batch = composition.print_batch()(batch_day)
        logger.info(
            "print batch",
            extra={
                "day": batch_day.isoformat(),
                "released": released.sent if batch_day == day else 0,
                "letters": batch.letters if batch else 0,
            },
        )
    count(Counts.NOTICES_SENT, released.sent)
    count(Counts.NOTICES_FAILED, released.failed)
    if released.failed:
        raise TransientError(f"{released.failed} held bill(s) could not be sent yet; the run is retried")
    later = {d for d in (mark.pending if mark else ()) if d > morning}
    marks.record(next_due(morning, later), mark, keep=later)


@observed
def lambda_handler(event: dict[str, Any], context: Any) -> PartialItemFailureResponse:
    return consume_sqs(event, context, record_handler, rejections=composition.rejections())
