"""The bus's archive, locally (``AWS::Events::Archive``), and a day's replay into a queue.

On AWS an archive keeps every event of its bus that matches its pattern, for its
``RetentionDays``, and ``aws events start-replay`` sends a time window of them to the bus
again (docs/DEPLOY.md "Replaying the bus"). moto keeps no archive that can be replayed, so
the runtime keeps its own, on disk, where it delivers the bus's events: the provisioner
gives each archive a rule with the archive's pattern on its bus, whose target is a queue of
the runtime's own (not the template's: no function polls it, no state snapshot holds it).
Each pass of the runtime's polling moves what that queue received into the archive's
directory, one JSON-lines file per day, an event a line, as the bus delivered it:

    <state dir>/archive/<ArchiveName>/<YYYY-MM-DD>.jsonl      (``local up --state DIR``)
    <a temporary directory>/<ArchiveName>/<YYYY-MM-DD>.jsonl  (without one)

An event's day is that of its ``detail.occurred_at`` (UTC; the simulated clock's, which
the functions read), else the envelope's ``time``. With a state directory, the archive
outlives restarts, as the files are the archive.

:func:`replay` sends one day's events to a queue (``sewerbill local replay --day
YYYY-MM-DD --to-queue NAME``), each as the rule would have delivered it: a fresh consumer
queue receives exactly that day's events, in the order the bus took them.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any

log = logging.getLogger("sewerbill.local")


@dataclass
class LocalArchive:
    logical_id: str
    name: str
    queue_url: str
    queue_arn: str
    retention_days: int | None = None
    directory: Path | None = None  # set by the runtime at start

    def flush(self, sqs: Any) -> int:
        """Move what the archive's queue received into its day files; how many events."""
        if self.directory is None:
            return 0
        moved = 0
        while True:
            answer = sqs.receive_message(QueueUrl=self.queue_url, MaxNumberOfMessages=10)
            messages = answer.get("Messages") or []
            if not messages:
                return moved
            lines: dict[str, list[str]] = {}
            for message in messages:
                body = message["Body"]
                lines.setdefault(day_of(body), []).append(json.dumps(json.loads(body), separators=(",", ":")))
            self.directory.mkdir(parents=True, exist_ok=True)
            for day, found in lines.items():
                with (self.directory / f"{day}.jsonl").open("a", encoding="utf-8") as out:
                    out.write("".join(line + "\n" for line in found))
            sqs.delete_message_batch(
                QueueUrl=self.queue_url,
                Entries=[{"Id": str(n), "ReceiptHandle": m["ReceiptHandle"]} for n, m in enumerate(messages)],
            )
            moved += len(messages)

    def days(self) -> list[str]:
        if self.directory is None or not self.directory.is_dir():
            return []
        return sorted(p.stem for p in self.directory.glob("*.jsonl"))

    def events_of(self, day: date) -> list[str]:
        """The day's events, as the bus delivered them (JSON text), in order."""
        if self.directory is None:
            return []
        path = self.directory / f"{day.isoformat()}.jsonl"
        if not path.is_file():
            return []
        return [line for line in path.read_text(encoding="utf-8").splitlines() if line]


def day_of(body: str) -> str:
    """The UTC day of an archived event: its detail's ``occurred_at``, else its ``time``."""
    try:
        event = json.loads(body)
    except ValueError:
        return "undated"
    detail = event.get("detail") if isinstance(event, dict) else None
    stamp = detail.get("occurred_at") if isinstance(detail, dict) else None
    if not isinstance(stamp, str):
        stamp = event.get("time") if isinstance(event, dict) else None
    if isinstance(stamp, str) and len(stamp) >= 10:
        try:
            return date.fromisoformat(stamp[:10]).isoformat()
        except ValueError:
            pass
    return "undated"


def replay(archive: LocalArchive, sqs: Any, day: date, queue_url: str) -> int:
    """Send ``day``'s archived events to ``queue_url``; how many were sent."""
    sent = 0
    events = archive.events_of(day)
    for start in range(0, len(events), 10):
        chunk = events[start : start + 10]
        entries = [{"Id": str(n), "MessageBody": body} for n, body in enumerate(chunk)]
        if queue_url.endswith(".fifo"):
            for entry in entries:
                entry["MessageGroupId"] = "replay"
                entry["MessageDeduplicationId"] = json.loads(str(entry["MessageBody"])).get("id", entry["Id"])
        answer = sqs.send_message_batch(QueueUrl=queue_url, Entries=entries)
        if answer.get("Failed"):
            raise RuntimeError(f"replay could not send {answer['Failed']}")
        sent += len(chunk)
    log.info("replayed %d event(s) of %s from %s", sent, day, archive.name)
    return sent
