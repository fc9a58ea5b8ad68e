"""One chunk of a billing cycle's accounts: rate each with the engine and issue its bill.

Trigger: run_billing_cycle -> the issue-bills queue -> here. Exactly once per account and
period: an account already billed is skipped, so a redelivery or a rerun after a crash
issues nothing twice. Accounts missing data are held with the reason.
"""

from __future__ import annotations

import json
from typing import Any

from aws_lambda_powertools import Logger
from aws_lambda_powertools.utilities.batch.types import PartialItemFailureResponse
from aws_lambda_powertools.utilities.data_classes.sqs_event import SQSRecord

from billing import composition
from billing.app.cycles import ChunkRequest
from common.handling import consume_sqs
from common.messages import MalformedMessage
from common.observability import Counts, count, observed

logger = Logger()


def record_handler(record: SQSRecord) -> None:
    try:
        request = ChunkRequest.from_json(json.loads(record.body))
    except (ValueError, KeyError, TypeError) as exc:
        raise MalformedMessage(f"issue-bills chunk: {exc}") from None
    result = composition.issue_chunk_use_case()(request)
    count(Counts.BILLS_ISSUED, len(result.bills))
    logger.info(
        "chunk issued",
        extra={
            "tenant": request.tenant,
            "first": request.first,
            "bills": len(result.bills),
            "held": len(result.held),
        },
    )


@observed
def lambda_handler(event: dict[str, Any], context: Any) -> PartialItemFailureResponse:
    return consume_sqs(event, context, record_handler, rejections=composition.rejections())
