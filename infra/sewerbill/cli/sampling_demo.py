"""The sampling part of ``sewerbill local demo``: a lab file reclassifies a PP account to B.

Kept apart from ``local.py`` (which others edit too): ``_run_demo`` calls :func:`run`.
It registers PP-0002's sampling point, uploads a lab file with BOD 220 mg/l (> 180,
PP-SEW-CAT-B), shows the StrengthCategoryChanged event that left through sampling's outbox
to the bus, and previews PP-0002's next bill with the event's basis concentrations, which
carries the PP-SEW-SURCHARGE line.
"""

from __future__ import annotations

import json
import urllib.request
from collections.abc import Callable
from typing import Any

from common.tariff_files import default_tariffs_dir, load_tariff_book

PP = "pleasant-prairie-sewer"
LAB_FILE = (
    "tenant,sample_id,account_id,collected_on,parameter,value,units,analysed_on,lab\n"
    f"{PP},DEMO-LAB-0115,PP-0002,2025-01-15,bod,220,mg/l,2025-01-17,Acme Labs\n"
    f"{PP},DEMO-LAB-0115,PP-0002,2025-01-15,tss,150,mg/l,2025-01-17,Acme Labs\n"
    f"{PP},DEMO-LAB-0115,PP-0002,2025-01-15,phosphorus,4,mg/l,2025-01-17,Acme Labs\n"
)


def _staff_call(rt: Any, method: str, path: str, body: Any) -> Any:
    token = rt.mint_token(sub="demo-clerk", claims={"role": "staff", "tenants": [PP]})
    req = urllib.request.Request(
        rt.gateway_url + path,
        data=json.dumps(body).encode(),
        method=method,
        headers={"authorization": f"Bearer {token}", "content-type": "application/json"},
    )
    with urllib.request.urlopen(req, timeout=30) as resp:  # noqa: S310 - loopback gateway
        return json.loads(resp.read())


def _capture(rt: Any) -> Callable[[], list[dict[str, Any]]]:
    sqs, events = rt.client("sqs"), rt.client("events")
    url = sqs.create_queue(QueueName="demo-sampling-events")["QueueUrl"]
    arn = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    bus = rt.resource("EventBus")
    events.put_rule(
        Name="demo-sampling", EventBusName=bus, EventPattern=json.dumps({"source": ["sewerbill.sampling"]})
    )
    events.put_targets(Rule="demo-sampling", EventBusName=bus, Targets=[{"Id": "q", "Arn": arn}])

    def read() -> list[dict[str, Any]]:
        found = []
        while messages := sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10).get("Messages", []):
            for m in messages:
                found.append(json.loads(m["Body"]))
                sqs.delete_message(QueueUrl=url, ReceiptHandle=m["ReceiptHandle"])
        return found

    return read


def run(rt: Any, say: Callable[[str], None]) -> bool:
    """The sampling step of the demo; True when PP-0002 ends in Category B with a surcharge."""
    if "SamplingOnLabFileUploadedFunction" not in rt.stack.functions:
        return True
    read = _capture(rt)
    _staff_call(rt, "PUT", f"/staff/{PP}/sampling-points/PP-0002", {"sampling_point": "MH-12"})
    say("[sampling] uploading lab/demo-2025-01.csv (PP-0002: BOD 220 mg/l on 2025-01-15) ...")
    rt.upload("UploadsBucket", "lab/demo-2025-01.csv", LAB_FILE)
    changed = [e["detail"] for e in read() if e["detail-type"] == "StrengthCategoryChanged"]
    if not changed:
        say("      MISSING: no StrengthCategoryChanged on the bus")
        return False
    event = changed[0]
    say(
        f"      StrengthCategoryChanged {event['account_id']}: {event['previous_category']} -> "
        f"{event['category']} from {event['effective_from']} ({event['reassignment']['reason']})"
    )
    basis = {k: v for k, v in event["basis"].items() if k in ("bod", "tss", "phosphorus", "fog") and v}
    from sewerbill.cli.whatif import preview_document  # the staff preview, same rating engine

    scenario = {
        "tenant": PP,
        "period": {"start": "2025-01-01", "end": "2025-02-01"},
        "account": {"class": "nonresidential", "zone": "PP", "meter_size": "1"},
        "water_gallons": 40000,
        "strength": basis,
    }
    try:
        lines = preview_document(scenario, load_tariff_book(default_tariffs_dir()))["lines"]
    except Exception as exc:  # the preview is billing's; show why it could not run
        say(f"      preview not available: {exc}")
        return bool(event["category"] == "B")
    for line in lines:
        say(f"      preview {line['rule_id']:<18} {line['amount']:>9}  {line['description']}")
    return bool(event["category"] == "B") and any(line["rule_id"] == "PP-SEW-SURCHARGE" for line in lines)
