"""The template's CloudWatch alarms, their conditions evaluated on the local stack.

There is no CloudWatch locally, so each alarm's metric is read from what the runtime knows
(issue 30): a queue's ``ApproximateNumberOfMessagesVisible`` from the queue itself, a
function's ``Errors`` from its invocations since start (an invocation that raised), its
``Throttles`` as none (nothing throttles locally) and the HTTP API's ``5xx`` from the
gateway's invocations that failed or answered 5xx. ``sewerbill local status`` lists each
alarm whose condition holds now, by the same threshold and comparison as in AWS. An alarm
on another metric is listed as not evaluated, never silently taken as fine.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

COMPARISONS: dict[str, Callable[[float, float], bool]] = {
    "GreaterThanThreshold": lambda v, t: v > t,
    "GreaterThanOrEqualToThreshold": lambda v, t: v >= t,
    "LessThanThreshold": lambda v, t: v < t,
    "LessThanOrEqualToThreshold": lambda v, t: v <= t,
}


@dataclass(frozen=True)
class Alarm:
    """One ``AWS::CloudWatch::Alarm`` of the stack, its properties resolved."""

    logical_id: str
    name: str
    namespace: str | None
    metric: str | None
    dimensions: dict[str, str] = field(default_factory=dict)
    threshold: float = 0.0
    comparison: str = "GreaterThanThreshold"

    @classmethod
    def of(cls, logical_id: str, name: str, props: dict[str, Any]) -> Alarm:
        return cls(
            logical_id=logical_id,
            name=str(props.get("AlarmName") or name),
            namespace=props.get("Namespace"),
            metric=props.get("MetricName"),
            dimensions={str(d["Name"]): str(d["Value"]) for d in props.get("Dimensions") or []},
            threshold=float(props.get("Threshold", 0)),
            comparison=str(props.get("ComparisonOperator", "GreaterThanThreshold")),
        )


class Metrics:
    """What the local stack can say of a metric now; None when it cannot say."""

    def __init__(
        self,
        visible: Callable[[str], int | None],
        invocations: Callable[[], Iterable[Any]],
        function_of: Callable[[str], str | None],
        api_ids: set[str],
    ) -> None:
        self._visible = visible  # queue name -> visible messages (None: not a queue here)
        self._invocations = invocations
        self._function_of = function_of  # function name -> logical id
        self._api_ids = api_ids

    def value(self, alarm: Alarm) -> float | None:
        key = (alarm.namespace, alarm.metric)
        dims = alarm.dimensions
        if key == ("AWS/SQS", "ApproximateNumberOfMessagesVisible") and "QueueName" in dims:
            count = self._visible(dims["QueueName"])
            return None if count is None else float(count)
        if alarm.namespace == "AWS/Lambda" and "FunctionName" in dims:
            function = self._function_of(dims["FunctionName"])
            if function is None:
                return None
            if alarm.metric == "Errors":
                return float(sum(1 for i in self._invocations() if i.function == function and i.error))
            if alarm.metric == "Throttles":
                return 0.0  # the local runtime never throttles
            return None
        if key == ("AWS/ApiGateway", "5xx") and dims.get("ApiId") in self._api_ids:
            return float(sum(1 for i in self._invocations() if i.trigger == "http" and _failed_request(i)))
        return None


def _failed_request(invocation: Any) -> bool:
    if invocation.error:
        return True  # the gateway answers 500
    result = invocation.result
    if isinstance(result, dict) and "statusCode" in result:
        try:
            return int(result["statusCode"]) >= 500
        except (TypeError, ValueError):
            return True
    return False


def evaluate(alarms: Iterable[Alarm], metrics: Metrics) -> tuple[list[dict[str, Any]], list[str]]:
    """The alarms whose condition holds now (each with its value), and those not evaluated."""
    firing: list[dict[str, Any]] = []
    unknown: list[str] = []
    for alarm in alarms:
        value = metrics.value(alarm)
        test = COMPARISONS.get(alarm.comparison)
        if value is None or test is None:
            unknown.append(alarm.logical_id)
            continue
        if test(value, alarm.threshold):
            firing.append(
                {
                    "alarm": alarm.logical_id,
                    "name": alarm.name,
                    "metric": f"{alarm.namespace} {alarm.metric}",
                    "dimensions": dict(alarm.dimensions),
                    "value": value,
                    "condition": f"{alarm.comparison} {alarm.threshold:g}",
                }
            )
    return firing, unknown
