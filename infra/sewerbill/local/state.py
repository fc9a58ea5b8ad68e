"""The local stack's state on disk (`sewerbill local up --state DIR`), and dead-letter redrive.

Without a state directory the local stack keeps nothing: its emulator lives in memory and a
restart begins empty. With one, a clean stop saves, and the next start restores before the
first invocation:

- every item of every DynamoDB table of the template (Scan, restored with BatchWriteItem
  into the tables the template creates; DynamoDB JSON, binary values as base64);
- every object of every bucket (its current version: the code reads no older one), with
  the content type, encoding, disposition, cache control and user metadata the code sets;
- every message of every queue, dead-letter queues included, with its body, its message
  attributes and its FIFO group: with moto in the runtime's process (the default) read from
  moto's queues as they stand, so a message in flight or delayed at the stop is saved and
  comes back visible; on another endpoint through ReceiveMessage (a message in flight there
  cannot be seen, and is reported as not saved);
- the simulated clock (its time and the firings so far: a restart neither fires again a
  schedule already fired nor starts the clock behind it), and the dead-letter listing.

Not kept: the e-mails moto's SES accepted (no code of the stack reads them back: notices
keeps its own record of what it sent, in its table), the invocation log, object versions
other than the current one, and the token signing key (tokens are minted anew).

A restore is not a change of state: the items it writes leave stream records, which the
stream pollers skip (their checkpoint moves past them, `StreamPoller.skip_existing`), so no
outbox publishes an event twice; objects are put with the bucket's notifications off, so no
file is taken in again. Before saving, the stream pollers catch up, so every outbox item
written before the stop has been published (its event is then in a queue, and saved there).

Layout of DIR, format version `VERSION`: ``CURRENT`` names the snapshot in use;
``snapshot-<time>-<id>/`` holds ``manifest.json`` (format, version, clock, dead letters,
counts), ``tables/<LogicalId>.jsonl`` (an item a line), ``queues/<LogicalId>.jsonl`` (a
message a line) and ``objects/<LogicalId>/index.jsonl`` plus one file per object body. A
save writes a new snapshot beside the old one, then replaces ``CURRENT`` (a rename), then
removes the old one: a crash while saving leaves the previous state in use.

`redrive` is what `StartMessageMoveTask` does on AWS (moto has none): every message of a
dead-letter queue goes back to the queue whose RedrivePolicy names it.
"""

from __future__ import annotations

import base64
import json
import logging
import os
import shutil
import tempfile
import time
import uuid
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import asdict
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sewerbill.local.clock import Firing
from sewerbill.local.sources import DeadLetter

if TYPE_CHECKING:
    from sewerbill.local.runtime import LocalRuntime

log = logging.getLogger("sewerbill.local")

FORMAT = "sewerbill-local-state"
VERSION = 1
POINTER = "CURRENT"
MANIFEST = "manifest.json"

# What a restored object keeps of its head (the code sets content types; metadata is kept too).
_OBJECT_FIELDS = ("ContentType", "ContentEncoding", "ContentDisposition", "ContentLanguage", "CacheControl")


class StateError(RuntimeError):
    """The state directory cannot be used (another format or version, damaged, or naming a
    table, bucket or queue the template no longer has)."""


class RedriveError(ValueError):
    """The queue named for a redrive is not a dead-letter queue with a source queue."""


# --- reading the directory ---------------------------------------------------------------------
def saved(directory: str | Path) -> dict[str, Any] | None:
    """The manifest of the state saved in `directory`, or None when nothing is saved there
    yet. Raises StateError for a state of another format or version, or a damaged one: asked
    before the emulator starts, so a wrong directory stops start-up at once."""
    snapshot = _current(Path(directory))
    if snapshot is None:
        return None
    try:
        manifest: dict[str, Any] = json.loads((snapshot / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise StateError(f"{snapshot}: no readable {MANIFEST} ({exc})") from exc
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise StateError(f"{snapshot}: not a sewerbill local state (format {manifest.get('format')!r})")
    if manifest.get("version") != VERSION:
        raise StateError(
            f"{directory}: a local state of format version {manifest.get('version')!r}; this runtime "
            f"reads version {VERSION} only. Start with another --state directory (or none), "
            "or with the sewerbill version that saved it."
        )
    return manifest


def _current(directory: Path) -> Path | None:
    pointer = directory / POINTER
    if not pointer.exists():
        return None
    name = pointer.read_text(encoding="utf-8").strip()
    snapshot = directory / name
    if not name or "/" in name or not snapshot.is_dir():
        raise StateError(f"{pointer} names {name!r}, which is not a snapshot in {directory}")
    return snapshot


# --- save ---------------------------------------------------------------------------------------
def save(rt: LocalRuntime, directory: str | Path) -> dict[str, Any]:
    """Write the stack's state to `directory` (see the module); returns what was saved."""
    began = time.perf_counter()
    root = Path(directory)
    root.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=".saving-", dir=root))
    try:
        counts = {
            "tables": {lid: _save_table(rt, lid, work) for lid in _of_type(rt, "AWS::DynamoDB::Table")},
            "buckets": {lid: _save_bucket(rt, lid, work) for lid in _of_type(rt, "AWS::S3::Bucket")},
            "queues": {lid: _save_queue(rt, lid, work) for lid in _of_type(rt, "AWS::SQS::Queue")},
        }
        manifest = {
            "format": FORMAT,
            "version": VERSION,
            "saved_at": datetime.now(UTC).isoformat(),
            "stack": rt.stack.name,
            "template": str(rt.template_path),
            "clock": {
                "now": rt.clock.now.isoformat(),
                "started": rt.clock.started.isoformat(),
                "fired": [_firing_json(f) for f in rt.clock.fired],
            },
            "dead_letters": [_dead_letter_json(d) for d in rt.dead_letters],
            **counts,
        }
        _write(work / MANIFEST, [json.dumps(manifest, indent=1)])
        name = f"snapshot-{datetime.now(UTC):%Y%m%dT%H%M%S}-{uuid.uuid4().hex[:8]}"
        os.rename(work, root / name)
        _write(root / f".{POINTER}.tmp", [name])
        os.replace(root / f".{POINTER}.tmp", root / POINTER)  # the switch: atomic
        _fsync_dir(root)
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        raise
    for old in root.iterdir():  # earlier snapshots and interrupted saves
        if old.is_dir() and old.name != name and old.name.startswith(("snapshot-", ".saving-")):
            shutil.rmtree(old, ignore_errors=True)
    report = _totals({**counts, "dead_letters": manifest["dead_letters"]})
    report.update(
        seconds=round(time.perf_counter() - began, 3), snapshot=name, clock=rt.clock.now.isoformat()
    )
    log.info("local state saved to %s: %s", root, report)
    return report


def _save_table(rt: LocalRuntime, lid: str, work: Path) -> int:
    pages = (
        rt.client("dynamodb").get_paginator("scan").paginate(TableName=rt.resource(lid), ConsistentRead=True)
    )
    lines = [json.dumps(_encode(item)) for page in pages for item in page["Items"]]
    _write(work / "tables" / f"{lid}.jsonl", lines)
    return len(lines)


def _save_bucket(rt: LocalRuntime, lid: str, work: Path) -> int:
    s3 = rt.client("s3")
    bucket = rt.resource(lid)
    folder = work / "objects" / lid
    folder.mkdir(parents=True)
    index: list[str] = []
    for page in s3.get_paginator("list_objects_v2").paginate(Bucket=bucket):
        for listed in page.get("Contents", []):
            got = s3.get_object(Bucket=bucket, Key=listed["Key"])
            body = got["Body"].read()
            file = f"{len(index)}.bin"
            _write_bytes(folder / file, body)
            head = {k: got[k] for k in _OBJECT_FIELDS if got.get(k)}
            index.append(
                json.dumps(
                    {"key": listed["Key"], "file": file, "metadata": got.get("Metadata") or {}, **head}
                )
            )
    _write(folder / "index.jsonl", index)
    return len(index)


def _save_queue(rt: LocalRuntime, lid: str, work: Path) -> int:
    messages = list(_queued(rt, lid))
    _write(work / "queues" / f"{lid}.jsonl", [json.dumps(m) for m in messages])
    return len(messages)


def _queued(rt: LocalRuntime, lid: str) -> Iterator[dict[str, Any]]:
    """Every message of the queue as `{id, body, attributes, group_id, deduplication_id}`."""
    if _moto_here(rt, "sqs"):  # moto in this process: its queue as it stands
        from moto.sqs.models import sqs_backends

        queue = sqs_backends[rt.stack.account][rt.stack.region].get_queue(
            rt.stack.resources[lid]["QueueName"]
        )
        with queue._messages_lock:
            held = list(queue._messages)
        for m in held:  # in flight or delayed included: saved as visible
            yield _message(m.id, m.body, m.message_attributes, m.group_id, m.deduplication_id)
        return
    sqs = rt.client("sqs")
    url = rt.resource(lid)
    handles: list[str] = []
    while True:
        got = sqs.receive_message(
            QueueUrl=url,
            MaxNumberOfMessages=10,
            VisibilityTimeout=60,
            AttributeNames=["All"],
            MessageAttributeNames=["All"],
        ).get("Messages", [])
        for m in got:
            handles.append(m["ReceiptHandle"])
            attrs = m.get("Attributes", {})
            yield _message(
                m["MessageId"],
                m["Body"],
                m.get("MessageAttributes", {}),
                attrs.get("MessageGroupId"),
                attrs.get("MessageDeduplicationId"),
            )
        if not got:
            break
    for i in range(0, len(handles), 10):  # visible again, as they were
        sqs.change_message_visibility_batch(
            QueueUrl=url,
            Entries=[
                {"Id": str(n), "ReceiptHandle": h, "VisibilityTimeout": 0}
                for n, h in enumerate(handles[i : i + 10])
            ],
        )
    hidden = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["ApproximateNumberOfMessagesNotVisible"])[
        "Attributes"
    ]
    if int(hidden.get("ApproximateNumberOfMessagesNotVisible", 0)) > len(handles):
        log.warning("%s: messages in flight at the stop could not be read and are not saved", lid)


def _message(
    message_id: str, body: str, attributes: dict[str, Any], group: str | None, dedup: str | None
) -> dict[str, Any]:
    kept: dict[str, Any] = {}
    for name, value in (attributes or {}).items():
        entry = {"DataType": value["DataType"]}
        if "StringValue" in value:
            entry["StringValue"] = value["StringValue"]
        if "BinaryValue" in value:
            raw = value["BinaryValue"]
            entry["BinaryValue"] = base64.b64encode(raw).decode() if isinstance(raw, bytes) else raw
        kept[name] = entry
    return {"id": message_id, "body": body, "attributes": kept, "group_id": group, "deduplication_id": dedup}


# --- restore ------------------------------------------------------------------------------------
def restore(rt: LocalRuntime, directory: str | Path) -> dict[str, Any] | None:
    """Put the state saved in `directory` back into the freshly provisioned stack, before any
    invocation; None when nothing is saved there yet."""
    began = time.perf_counter()
    manifest = saved(directory)
    if manifest is None:
        return None
    snapshot = _current(Path(directory))
    assert snapshot is not None
    missing = [
        f"{kind[:-1]} {lid}"
        for kind, rtype in (
            ("tables", "AWS::DynamoDB::Table"),
            ("buckets", "AWS::S3::Bucket"),
            ("queues", "AWS::SQS::Queue"),
        )
        for lid in manifest.get(kind, {})
        if rt.stack.types.get(lid) != rtype
    ]
    if missing:
        raise StateError(
            f"{directory} holds the state of {', '.join(missing)}, which {rt.template_path.name} no "
            "longer has: start with another --state directory (or none)"
        )
    try:
        _put_back(rt, manifest, snapshot)
    except (OSError, ValueError, KeyError, TypeError) as exc:  # a file missing or cut short
        raise StateError(f"{snapshot}: a damaged state ({type(exc).__name__}: {exc})") from exc
    report = _totals(manifest)
    report.update(seconds=round(time.perf_counter() - began, 3), clock=rt.clock.now.isoformat())
    log.info("local state restored from %s: %s", directory, report)
    return report


def _put_back(rt: LocalRuntime, manifest: dict[str, Any], snapshot: Path) -> None:
    _empty(rt)  # a stack that holds something already (an endpoint that keeps data) is replaced
    for lid in manifest["tables"]:
        _restore_table(rt, lid, snapshot)
    # The restore's writes are in the tables' streams: no poller hands them out as changes.
    for poller in rt._stream_pollers:
        poller.skip_existing()
    for lid in manifest["buckets"]:
        _restore_bucket(rt, lid, snapshot)
    renamed: dict[str, str] = {}  # a message's id when saved -> its id now
    for lid in manifest["queues"]:
        renamed.update(_restore_queue(rt, lid, snapshot))
    clock = manifest["clock"]
    rt.clock.now = datetime.fromisoformat(clock["now"])
    rt.clock.started = datetime.fromisoformat(clock["started"])
    rt.clock.fired = [_firing(f) for f in clock["fired"]]
    # The dead-letter listing as it was; its letters still in their queues have new ids, which
    # the watch knows already (they are not new dead letters).
    urls = {lid: url for url, lid in rt._dlq_watch.dlqs.items()}
    for entry in manifest["dead_letters"]:
        letter = _dead_letter(entry)
        letter.message_id = renamed.get(letter.message_id, letter.message_id)
        if letter.queue in urls:
            rt._dlq_watch.seen[urls[letter.queue]].add(letter.message_id)
        rt.dead_letters.append(letter)


def _empty(rt: LocalRuntime) -> None:
    """Delete what the stack's tables, buckets and queues hold: freshly provisioned on moto
    started by this run they hold nothing, but an endpoint that outlives the runtime (moto
    in a process that started the stack before, LocalStack) may; a restore puts back the
    saved state, not that state added to another."""
    ddb, s3, sqs = rt.client("dynamodb"), rt.client("s3"), rt.client("sqs")
    for lid in _of_type(rt, "AWS::DynamoDB::Table"):
        table = rt.resource(lid)
        keys = [k["AttributeName"] for k in ddb.describe_table(TableName=table)["Table"]["KeySchema"]]
        pages = ddb.get_paginator("scan").paginate(
            TableName=table,
            ProjectionExpression=", ".join(f"#k{n}" for n in range(len(keys))),
            ExpressionAttributeNames={f"#k{n}": k for n, k in enumerate(keys)},
        )
        found = [item for page in pages for item in page["Items"]]
        for i in range(0, len(found), 25):
            request = {table: [{"DeleteRequest": {"Key": key}} for key in found[i : i + 25]]}
            while request:
                request = ddb.batch_write_item(RequestItems=request).get("UnprocessedItems") or {}
    for lid in _of_type(rt, "AWS::S3::Bucket"):
        bucket = rt.resource(lid)
        for page in s3.get_paginator("list_objects_v2").paginate(Bucket=bucket):
            listed = [{"Key": o["Key"]} for o in page.get("Contents", [])]
            if listed:
                s3.delete_objects(Bucket=bucket, Delete={"Objects": listed, "Quiet": True})
    for lid in _of_type(rt, "AWS::SQS::Queue"):
        sqs.purge_queue(QueueUrl=rt.resource(lid))
    rt.dead_letters.clear()
    for seen in rt._dlq_watch.seen.values():
        seen.clear()


def _restore_table(rt: LocalRuntime, lid: str, snapshot: Path) -> None:
    ddb = rt.client("dynamodb")
    table = rt.resource(lid)
    items = [_decode(json.loads(line)) for line in _lines(snapshot / "tables" / f"{lid}.jsonl")]
    for i in range(0, len(items), 25):
        request = {table: [{"PutRequest": {"Item": item}} for item in items[i : i + 25]]}
        while request:
            request = ddb.batch_write_item(RequestItems=request).get("UnprocessedItems") or {}


def _restore_bucket(rt: LocalRuntime, lid: str, snapshot: Path) -> None:
    s3 = rt.client("s3")
    bucket = rt.resource(lid)
    folder = snapshot / "objects" / lid
    entries = [json.loads(line) for line in _lines(folder / "index.jsonl")]
    if not entries:
        return
    with _notifications_off(rt, bucket):  # a restored file is not a new upload
        for entry in entries:
            extra = {k: entry[k] for k in _OBJECT_FIELDS if entry.get(k)}
            s3.put_object(
                Bucket=bucket,
                Key=entry["key"],
                Body=(folder / entry["file"]).read_bytes(),
                Metadata=entry.get("metadata") or {},
                **extra,
            )


@contextmanager
def _notifications_off(rt: LocalRuntime, bucket: str) -> Iterator[None]:
    """The bucket's notifications off, then back as the provisioner set them (from the
    template: moto's GetBucketNotificationConfiguration leaves the EventBridge setting out,
    so what an endpoint answers cannot be put back)."""
    config = rt.stack.bucket_notifications.get(bucket)
    if not config:
        yield
        return
    s3 = rt.client("s3")
    s3.put_bucket_notification_configuration(Bucket=bucket, NotificationConfiguration={})
    try:
        yield
    finally:
        s3.put_bucket_notification_configuration(Bucket=bucket, NotificationConfiguration=config)


def _moto_here(rt: LocalRuntime, service: str) -> bool:
    """Whether `service` is answered by moto running in this process (the default)."""
    emulator = rt.emulator
    return emulator._server is not None and emulator.endpoint_for(service) == emulator.endpoint_url


def _restore_queue(rt: LocalRuntime, lid: str, snapshot: Path) -> dict[str, str]:
    url = rt.resource(lid)
    messages = [json.loads(line) for line in _lines(snapshot / "queues" / f"{lid}.jsonl")]
    return dict(zip([m["id"] for m in messages], _send_all(rt, url, messages), strict=True))


def _send_all(rt: LocalRuntime, url: str, messages: list[dict[str, Any]]) -> list[str]:
    """Send `messages` (as `_message` keeps them) to `url`, in order; their new ids."""
    sqs = rt.client("sqs")
    ids: list[str] = []
    for i in range(0, len(messages), 10):
        entries = []
        for n, m in enumerate(messages[i : i + 10]):
            entry: dict[str, Any] = {"Id": str(n), "MessageBody": m["body"]}
            if m.get("attributes"):
                entry["MessageAttributes"] = {
                    name: {
                        **{k: v for k, v in value.items() if k != "BinaryValue"},
                        **(
                            {"BinaryValue": base64.b64decode(value["BinaryValue"])}
                            if "BinaryValue" in value
                            else {}
                        ),
                    }
                    for name, value in m["attributes"].items()
                }
            if url.endswith(".fifo"):
                entry["MessageGroupId"] = m.get("group_id") or "restored"
                entry["MessageDeduplicationId"] = m.get("deduplication_id") or uuid.uuid4().hex
            entries.append(entry)
        sent = sqs.send_message_batch(QueueUrl=url, Entries=entries)
        if sent.get("Failed"):
            raise StateError(f"{url}: messages not sent back: {sent['Failed']}")
        by_entry = {s["Id"]: s["MessageId"] for s in sent["Successful"]}
        ids.extend(by_entry[str(n)] for n in range(len(entries)))
    return ids


# --- redrive ------------------------------------------------------------------------------------
def redrive(rt: LocalRuntime, queue: str) -> dict[str, Any]:
    """Move every message of a dead-letter queue back to its source queue, as SQS's
    `StartMessageMoveTask` does. `queue`: the dead-letter queue's logical id, name or URL,
    or its source queue's. Returns the two queues and how many messages moved."""
    dlq_lid, source_lid = _redrive_pair(rt, queue)
    sqs = rt.client("sqs")
    dlq_url, source_url = rt.resource(dlq_lid), rt.resource(source_lid)
    moved: list[str] = []
    while True:
        got = sqs.receive_message(
            QueueUrl=dlq_url,
            MaxNumberOfMessages=10,
            VisibilityTimeout=60,
            AttributeNames=["All"],
            MessageAttributeNames=["All"],
        ).get("Messages", [])
        if not got:
            break
        kept = [
            _message(
                m["MessageId"],
                m["Body"],
                m.get("MessageAttributes", {}),
                m.get("Attributes", {}).get("MessageGroupId"),
                m.get("Attributes", {}).get("MessageDeduplicationId"),
            )
            for m in got
        ]
        _send_all(rt, source_url, kept)  # sent before deleted: a crash between repeats, never loses
        sqs.delete_message_batch(
            QueueUrl=dlq_url,
            Entries=[{"Id": str(n), "ReceiptHandle": m["ReceiptHandle"]} for n, m in enumerate(got)],
        )
        moved.extend(m["MessageId"] for m in got)
    gone = set(moved)
    rt.dead_letters[:] = [d for d in rt.dead_letters if not (d.queue == dlq_lid and d.message_id in gone)]
    if dlq_url in rt._dlq_watch.seen:
        rt._dlq_watch.seen[dlq_url] -= gone
    log.info("redrove %d message(s) from %s to %s", len(moved), dlq_lid, source_lid)
    return {"dead_letter_queue": dlq_lid, "source_queue": source_lid, "moved": len(moved)}


def _redrive_pair(rt: LocalRuntime, queue: str) -> tuple[str, str]:
    """(dead-letter queue, source queue) logical ids for `queue` (either of them, by logical
    id, name or URL), from the RedrivePolicy the template gives each source queue."""
    queues = _of_type(rt, "AWS::SQS::Queue")
    lid = next(
        (
            q
            for q in queues
            if queue in (q, rt.stack.resources[q].get("QueueName"), rt.stack.resources[q].get("QueueUrl"))
        ),
        None,
    )
    if lid is None:
        raise RedriveError(f"{queue!r} is not a queue of stack {rt.stack.name}")
    sources: dict[str, list[str]] = {}  # dlq logical id -> source logical ids
    by_arn = {rt.stack.resources[q]["Arn"]: q for q in queues}
    sqs = rt.client("sqs")
    for q in queues:
        policy = (
            sqs.get_queue_attributes(QueueUrl=rt.resource(q), AttributeNames=["RedrivePolicy"])
            .get("Attributes", {})
            .get("RedrivePolicy")
        )
        if policy:
            target = by_arn.get(json.loads(policy)["deadLetterTargetArn"])
            if target is not None:
                sources.setdefault(target, []).append(q)
                if q == lid:
                    return target, q
    if lid not in sources:
        raise RedriveError(
            f"{lid} is neither a dead-letter queue with a source queue nor a queue with a "
            "dead-letter queue (rule-target and stream-failure destinations have no source queue "
            "to move back to: resend their events once the cause is fixed)"
        )
    if len(sources[lid]) > 1:
        raise RedriveError(
            f"{lid} is the dead-letter queue of {', '.join(sources[lid])}: name the source queue"
        )
    return lid, sources[lid][0]


# --- helpers ------------------------------------------------------------------------------------
def _of_type(rt: LocalRuntime, rtype: str) -> list[str]:
    return sorted(lid for lid, t in rt.stack.types.items() if t == rtype and lid in rt.stack.resources)


def _totals(counts: dict[str, Any]) -> dict[str, Any]:
    return {
        "items": sum(counts.get("tables", {}).values()),
        "objects": sum(counts.get("buckets", {}).values()),
        "messages": sum(counts.get("queues", {}).values()),
        "dead_letters": len(counts.get("dead_letters", [])),
    }


def _encode(value: Any) -> Any:
    """A DynamoDB item (low-level form) made JSON: binary values as base64 text."""
    if isinstance(value, dict):
        return {
            k: (
                base64.b64encode(v).decode()
                if k == "B"
                else [base64.b64encode(b).decode() for b in v]
                if k == "BS"
                else _encode(v)
            )
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [_encode(v) for v in value]
    return value


def _decode(value: Any) -> Any:
    if isinstance(value, dict):
        return {
            k: (
                base64.b64decode(v)
                if k == "B" and isinstance(v, str)
                else [base64.b64decode(b) for b in v]
                if k == "BS"
                else _decode(v)
            )
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [_decode(v) for v in value]
    return value


def _firing_json(f: Firing) -> dict[str, Any]:
    return {**asdict(f), "scheduled_time": f.scheduled_time.isoformat()}


def _firing(data: dict[str, Any]) -> Firing:
    return Firing(**{**data, "scheduled_time": datetime.fromisoformat(data["scheduled_time"])})


def _dead_letter_json(d: DeadLetter) -> dict[str, Any]:
    return {**asdict(d), "at": d.at.isoformat()}


def _dead_letter(data: dict[str, Any]) -> DeadLetter:
    return DeadLetter(**{**data, "at": datetime.fromisoformat(data["at"])})


def _lines(path: Path) -> list[str]:
    return [line for line in path.read_text(encoding="utf-8").splitlines() if line]


def _write(path: Path, lines: Iterable[str]) -> None:
    _write_bytes(path, "".join(f"{line}\n" for line in lines).encode())


def _write_bytes(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as out:
        out.write(data)
        out.flush()
        os.fsync(out.fileno())


def _fsync_dir(path: Path) -> None:
    if hasattr(os, "O_DIRECTORY"):
        fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
