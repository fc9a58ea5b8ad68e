"""What the embedded emulator keeps beyond the data the stack stores, kept bounded.

moto keeps every DynamoDB stream record and every sent e-mail (with its PDF attachment) for
as long as the process lives, so a simulated year grew the stack's memory month by month
while its tables and objects did not (issue 31: about 90 MB a month). AWS keeps neither:
DynamoDB drops a stream record 24 hours after it was written, and SES keeps no copy of a
sent message at all. `Retention.after_drain`, called by the runtime each time a drain
settles (nothing in flight, every stream read up to its end), does what AWS does:

- **Stream records** older than 24 hours of the runtime's clock are dropped from the front
  of each table's shard. Only records that were already written when an earlier drain
  settled are dropped, so no poller loses a record it has not read: where AWS would drop an
  unread record after 24 hours, the local stack keeps it (losing it would hide the fault
  that left it unread). Sequence numbers stay what they were (the shard's starting number
  moves past the dropped records), so checkpoints and iterators keep pointing where they did.
- **Sent e-mails:** the newest `keep_mail` messages are kept whole (tests and a developer
  read them); older ones keep their headers only (sender, recipients, subject, message id)
  and lose their bodies and attachments.

Only moto running in this process is trimmed (the default); an external endpoint keeps
what it keeps.
"""

from __future__ import annotations

import os
from collections import deque
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

STREAM_RETENTION = timedelta(hours=24)
KEEP_MAIL = int(os.environ.get("SEWERBILL_LOCAL_KEEP_MAIL", "1000"))


class Retention:
    """Trims moto's stream shards and sent mail after each settled drain (see the module)."""

    def __init__(self, now: Callable[[], datetime], keep_mail: int = KEEP_MAIL) -> None:
        self.now = now
        self.keep_mail = keep_mail
        # per shard (by identity: a table made again has a new one): the shard and, for each
        # settled drain, (when, the shard's next sequence number then)
        self._marks: dict[int, tuple[Any, deque[tuple[datetime, int]]]] = {}
        self._mail_done: dict[int, int] = {}  # id(backend) -> messages already trimmed
        self.dropped_records = 0
        self.trimmed_mail = 0

    def after_drain(self) -> None:
        from sewerbill.local import motoshim

        now = self.now()
        with motoshim.stream_lock:
            shards = _shards()
            for gone in self._marks.keys() - {id(s) for s in shards}:
                del self._marks[gone]
            for shard in shards:
                self._trim_stream(shard, now)
        self._trim_mail()

    def _trim_stream(self, shard: Any, now: datetime) -> None:
        marks = self._marks.setdefault(id(shard), (shard, deque()))[1]
        end = shard.starting_sequence_number + len(shard.items)
        if not marks or marks[-1][1] != end:
            marks.append((now, end))
        cut = None
        while marks and now - marks[0][0] >= STREAM_RETENTION:
            cut = marks.popleft()[1]
        if cut is None:
            return
        count = cut - shard.starting_sequence_number
        if count > 0:
            del shard.items[:count]
            shard.starting_sequence_number += count
            self.dropped_records += count

    def _trim_mail(self) -> None:
        for backend in _mail_backends():
            sent = backend.sent_messages
            done = self._mail_done.get(id(backend), 0)
            upto = len(sent) - self.keep_mail
            for message in sent[done:upto] if upto > done else ():
                raw = getattr(message, "raw_data", None)
                if isinstance(raw, str):
                    message.raw_data = _headers_only(raw)
                    self.trimmed_mail += 1
            if upto > done:
                self._mail_done[id(backend)] = upto


def _headers_only(raw: str) -> str:
    for blank in ("\r\n\r\n", "\n\n"):
        head, found, _ = raw.partition(blank)
        if found:
            return f"{head}{blank}(body dropped by the local emulator: sewerbill.local.retention)\n"
    return raw


def _shards() -> list[Any]:
    from moto.dynamodb.models import dynamodb_backends

    return [
        table.stream_shard
        for regions in list(dynamodb_backends.values())
        for backend in list(regions.values())
        for table in list(backend.tables.values())
        if table.stream_shard is not None
    ]


def _mail_backends() -> list[Any]:
    from moto.ses.models import ses_backends

    return [backend for regions in list(ses_backends.values()) for backend in list(regions.values())]
