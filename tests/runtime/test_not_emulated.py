"""What the local runtime cannot run faithfully stops start-up, naming it; nothing is skipped."""

from __future__ import annotations

from pathlib import Path

import pytest

from sewerbill.local import LocalRuntime
from sewerbill.local.intrinsics import UnresolvableError
from sewerbill.local.stack import NotEmulated

pytestmark = pytest.mark.integration

HEAD = 'AWSTemplateFormatVersion: "2010-09-09"\nTransform: AWS::Serverless-2016-10-31\nResources:\n'
QUEUE = "  Work:\n    Type: AWS::SQS::Queue\n"


@pytest.mark.parametrize(
    ("resources", "error", "named"),
    [
        ("  Clicks:\n    Type: AWS::Kinesis::Stream\n", NotEmulated, "Clicks (AWS::Kinesis::Stream)"),
        (
            QUEUE + "  Nightly:\n    Type: AWS::Events::Rule\n    Properties:\n"
            "      ScheduleExpression: rate(1 day)\n      Targets: [{Id: q, Arn: !GetAtt Work.Arn}]\n",
            NotEmulated,
            "Nightly: schedules are AWS::Scheduler::Schedule",
        ),
        (
            "  Work:\n    Type: AWS::SQS::Queue\n    Properties:\n      QueueName: !Select [0, [a, b]]\n",
            UnresolvableError,
            "Fn::Select",
        ),
    ],
)
def test_a_template_part_the_runtime_cannot_run_stops_start_up(
    tmp_path: Path, resources: str, error: type[Exception], named: str
) -> None:
    template = tmp_path / "template.yaml"
    template.write_text(HEAD + resources)
    with pytest.raises(error, match=named.replace("(", r"\(").replace(")", r"\)")):
        LocalRuntime.start(template, gateway=False)
