"""Sampling's staff use cases and its daily run (each called by one thin handler).

- register a sampling point (billing's ``AccountsChanged`` tells sampling every account it
  bills, sampled at its service address; staff register the sampling point, and the
  discharger's details, of an account sampled elsewhere);
- a single lab result from the HTTP API (the same checks as a file row);
- a staff resample decision (PP-SEW-RESAMPLE), then reclassification;
- satellite systems: delivery of certified results and resample requests
  (PP-SEW-SAT-SAMPLE, PP-SEW-SAT-RESAMPLE);
- annual reports received (PP-SEW-REPORT) and lab invoices passed through
  (PP-SEW-SAMPLE-COST);
- the daily run: PP-SEW-CAT-B-EXIT returns to Category A on their anniversary, satellite
  reminders and breaches, annual report reminders before February 10.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date
from decimal import Decimal
from typing import Any

from common.clock import Clock
from common.due import next_due
from common.errors import PermanentError
from common.events import Event
from common.money import round_line
from sampling.adapters.dynamodb import DynamoSamplingRepository
from sampling.adapters.s3 import S3Objects
from sampling.domain.daily import deadline_next, report_window_next
from sampling.domain.errors import InvalidInput, SamplingError
from sampling.domain.intake import (
    after_new_results,
    check_against_stored,
    date_windows,
    local_today,
    reclassify,
)
from sampling.domain.lab_files import BadCell, parse_row
from sampling.domain.policy import Policies
from sampling.domain.samples import (
    AccountInfo,
    DecisionRefused,
    check_decision,
    decide_split_resample,
    final_results,
)
from sampling.domain.satellite import (
    ResultsDeadline,
    deadline_actions,
    decide_resample_request,
    resample_window_ends_on,
)
from sampling.domain.strength import CLASSIFIED_TENANTS, PLEASANT_PRAIRIE_SEWER
from sampling.events import (
    AnnualReportReceived,
    AnnualReportReminderDue,
    CertifiedResult,
    ResampleDecided,
    SamplingCostCharged,
    SatelliteResampleRequestDecided,
    SatelliteResultsDelivered,
    SatelliteResultsDueSoon,
    SatelliteResultsOverdue,
    SplitResampleRequestDecided,
    StrengthClassified,
)


class NotFound(SamplingError):
    """The sample or account named does not exist (HTTP 404)."""


class Conflict(SamplingError):
    """The request contradicts what is recorded (HTTP 409), e.g. a second value for a result."""


class Refused(SamplingError):
    """A request the rules refuse (HTTP 422), with the reason."""


@dataclass(frozen=True)
class DailyRun:
    exits: int = 0
    reminders: int = 0
    breaches: int = 0
    report_reminders: int = 0


class SamplingService:
    def __init__(
        self, *, repo: DynamoSamplingRepository, reports: S3Objects, clock: Clock, policies: Policies
    ) -> None:
        self.repo = repo
        self.reports = reports
        self.clock = clock
        self.policies = policies

    # --- accounts -------------------------------------------------------------------------
    def register_sampling_point(
        self, tenant: str, account_id: str, body: Mapping[str, Any], by: str
    ) -> AccountInfo:
        self.policies(tenant, local_today(self.clock.now()))  # unknown tenant -> error
        private = bool(body.get("private", False))
        if private and tenant != PLEASANT_PRAIRIE_SEWER:
            raise InvalidInput(
                "private", f"{tenant} lists no private sewers (PP-SEW-PRIVATE is Pleasant Prairie's)"
            )
        info = AccountInfo(
            tenant=tenant,
            account_id=account_id,
            sampling_point=str(body["sampling_point"]),
            satellite=bool(body.get("satellite", False)),
            nonresidential=bool(body.get("nonresidential", True)),
            sic_division=body.get("sic_division"),
            avg_daily_flow_gal=body.get("avg_daily_flow_gal"),
            nongovernmental=bool(body.get("nongovernmental", True)),
            discharges_toxic=bool(body.get("discharges_toxic", False)),
            private=private,
        )
        self.repo.register_account(info, registered_by=by)
        return info

    # --- one result from the API ----------------------------------------------------------
    def add_result(self, tenant: str, cells: Mapping[str, str]) -> dict[str, Any]:
        now = self.clock.now()
        today = local_today(now)
        policy = self.policies(tenant, today)
        try:
            row = parse_row(
                {**cells, "tenant": tenant},
                line=1,
                today=today,
                tenants=CLASSIFIED_TENANTS,
                plausible_max={tenant: policy.plausible_max_mg_l},
                windows=date_windows(self.policies, today),
            )
        except BadCell as bad:
            raise InvalidInput(bad.column, bad.reason) from None
        checked = check_against_stored([row], self.repo)
        kept, again = checked.new, checked.repeated
        if checked.waiting:
            raise NotFound(
                "account_id",
                f"account {row.account_id} of {tenant} is not known to sampling (billing has not published it)",
            )
        if checked.rejected:
            problem = checked.rejected[0]
            if problem.column == "account_id":
                raise NotFound(problem.column, problem.reason)
            raise Conflict(problem.column, problem.reason)
        self.repo.record_results(kept)
        events: list[Event] = []
        record = self.repo.account(tenant, row.account_id)
        event = after_new_results(
            tenant, row.account_id, [*kept, *again], record, self.repo, self.policies, now, today, events
        )
        self.repo.publish([*events, *([event] if event else [])])
        if event is not None:
            self.repo.record_classifications([(event, record)])
        return {
            "sample_id": row.sample_id,
            "parameter": row.parameter,
            "value_mg_l": str(row.value),
            "repeated": bool(again),
            "category": event.category if event else None,
        }

    # --- resample decisions (PP-SEW-RESAMPLE) ---------------------------------------------
    def decide(self, tenant: str, sample_id: str, choice: str, reason: str, by: str) -> dict[str, Any]:
        sample = self.repo.sample(tenant, sample_id)
        if sample is None:
            raise NotFound("sample_id", f"no sample {sample_id} of {tenant}")
        account_id = sample["account_id"]
        now = self.clock.now()
        record = self.repo.account(tenant, account_id)
        earlier = record.decisions.get(sample_id)
        try:
            decision = check_decision(record, sample_id, choice, by, reason, now)
        except DecisionRefused as exc:
            raise Refused(exc.field, exc.message) from None
        if earlier is not None:
            if earlier.choice != decision.choice:
                raise Conflict(
                    "decision",
                    f"{sample_id} was decided {earlier.choice!r} by {earlier.decided_by} on "
                    f"{earlier.decided_at.date()} ({earlier.reason}); not {choice!r}",
                )
            return {"decision": earlier.choice, "repeated": True}
        event = ResampleDecided(
            occurred_at=now,
            tenant=tenant,
            account_id=account_id,
            original_sample_id=sample_id,
            resample_id=decision.resample_id,
            decision=decision.choice,
            decided_by=decision.decided_by,
            reason=decision.reason,
        )
        self.repo.record_decision(tenant, account_id, decision, event)
        record = self.repo.account(tenant, account_id)
        classified = reclassify(
            record,
            repo=self.repo,
            policy=self.policies(tenant, local_today(now)),
            trigger=f"decision:{sample_id}",
            effective_from=date.fromisoformat(sample["collected_on"]),
            touched=[date.fromisoformat(sample["collected_on"])],
            now=now,
            today=local_today(now),
        )
        final = [
            f
            for f in final_results(record)
            if sample_id in f.sample_ids or decision.resample_id in f.sample_ids
        ]
        used = final[0].result.concentrations() if final else {}
        return {
            "decision": decision.choice,
            "original_sample_id": sample_id,
            "resample_id": decision.resample_id,
            "decided_by": decision.decided_by,
            "reason": decision.reason,
            "used": {p.value: str(v) for p, v in used.items()},
            "category": classified.category,
            "repeated": False,
        }

    # --- satellite systems ----------------------------------------------------------------
    def _deadline(self, tenant: str, sample_id: str) -> tuple[str, dict[str, Any]]:
        sample = self.repo.sample(tenant, sample_id)
        if sample is None:
            raise NotFound("sample_id", f"no sample {sample_id} of {tenant}")
        deadline = self.repo.deadline(tenant, sample["account_id"], sample_id)
        if deadline is None:
            raise Refused("sample_id", f"{sample_id} is not a satellite system's routine sample")
        return sample["account_id"], deadline

    def deliver(self, tenant: str, sample_id: str, delivered_on: date) -> dict[str, Any]:
        account_id, deadline = self._deadline(tenant, sample_id)
        if delivered_on > local_today(self.clock.now()):
            raise InvalidInput("delivered_on", f"{delivered_on} is in the future")
        if delivered_on.isoformat() < deadline["sampled_on"]:
            raise InvalidInput(
                "delivered_on", f"{delivered_on} is before the sample ({deadline['sampled_on']})"
            )
        if "delivered_on" in deadline and deadline["delivered_on"] != delivered_on.isoformat():
            raise Conflict("delivered_on", f"already delivered on {deadline['delivered_on']}")
        results = [r for r in self.repo.account(tenant, account_id).results if r.sample_id == sample_id]
        delivered = SatelliteResultsDelivered(
            occurred_at=self.clock.now(),
            tenant=tenant,
            account_id=account_id,
            sample_id=sample_id,
            sampled_on=date.fromisoformat(deadline["sampled_on"]),
            due_on=date.fromisoformat(deadline["due_on"]),
            delivered_on=delivered_on,
            on_time=delivered_on.isoformat() <= deadline["due_on"],
            results=tuple(
                CertifiedResult(
                    parameter=r.parameter,
                    value=r.value,
                    reported=r.reported,
                    lab=r.lab,
                    analysed_on=r.analysed_on,
                )
                for r in sorted(results, key=lambda r: r.parameter)
            ),
        )
        # The results go out with the delivery (notices emails them), once: the outbox keeps
        # one event per sample.
        self.repo.mark_deadline(
            tenant, account_id, sample_id, "delivered_on", delivered_on.isoformat(), delivered
        )
        return {
            "sample_id": sample_id,
            "due_on": deadline["due_on"],
            "delivered_on": delivered_on.isoformat(),
            "on_time": delivered_on.isoformat() <= deadline["due_on"],
        }

    def request_resample(
        self, tenant: str, sample_id: str, requested_on: date, by: str = ""
    ) -> dict[str, Any]:
        """A resample request: after a discharger's split (PP-SEW-SPLIT) or from a satellite
        system on its routine sample (PP-SEW-SAT-RESAMPLE)."""
        sample = self.repo.sample(tenant, sample_id)
        if sample is not None and sample["kind"] == "split":
            return self._split_resample(tenant, sample, requested_on, by)
        account_id, deadline = self._deadline(tenant, sample_id)
        if "delivered_on" not in deadline:
            raise Refused("sample_id", f"the result of {sample_id} has not been delivered yet")
        now = self.clock.now()
        if requested_on > local_today(now):
            raise InvalidInput("requested_on", f"{requested_on} is in the future")
        policy = self.policies(tenant, local_today(now))
        outcome = decide_resample_request(
            date.fromisoformat(deadline["delivered_on"]), requested_on, policy.satellite_request_days
        )
        self.repo.publish(
            [
                SatelliteResampleRequestDecided(
                    occurred_at=now,
                    tenant=tenant,
                    account_id=account_id,
                    sample_id=sample_id,
                    accepted=outcome.accepted,
                    delivered_on=outcome.delivered_on,
                    requested_on=outcome.requested_on,
                    last_day=outcome.last_day,
                    reason=outcome.reason,
                )
            ]
        )
        return {
            "accepted": outcome.accepted,
            "delivered_on": outcome.delivered_on.isoformat(),
            "requested_on": outcome.requested_on.isoformat(),
            "last_day": outcome.last_day.isoformat(),
            "reason": outcome.reason,
            "rule_id": outcome.rule_id,
        }

    def _split_resample(
        self, tenant: str, sample: Mapping[str, Any], requested_on: date, by: str
    ) -> dict[str, Any]:
        now = self.clock.now()
        today = local_today(now)
        if requested_on > today:
            raise InvalidInput("requested_on", f"{requested_on} is in the future")
        policy = self.policies(tenant, today)
        record = self.repo.account(tenant, sample["account_id"])
        try:
            outcome = decide_split_resample(record, sample["sample_id"], policy.split_difference_percent)
        except DecisionRefused as exc:
            raise Refused(exc.field, exc.message) from None
        self.repo.publish(
            [
                SplitResampleRequestDecided(
                    occurred_at=now,
                    tenant=tenant,
                    account_id=sample["account_id"],
                    split_sample_id=outcome.split_id,
                    original_sample_id=outcome.original_id,
                    accepted=outcome.accepted,
                    requested_on=requested_on,
                    requested_by=by,
                    differences_mg_l=outcome.differences,
                    significant=outcome.significant,
                    difference_percent=policy.split_difference_percent,
                    at_discharger_cost=outcome.accepted,
                    reason=outcome.reason[:2000],
                )
            ]
        )
        return {
            "accepted": outcome.accepted,
            "split_sample_id": outcome.split_id,
            "original_sample_id": outcome.original_id,
            "differences_mg_l": {p: str(d) for p, d in outcome.differences.items()},
            "significant": list(outcome.significant),
            "at_discharger_cost": outcome.accepted,
            "reason": outcome.reason,
            "rule_id": outcome.rule_id,
        }

    # --- annual reports and lab invoices --------------------------------------------------
    def receive_report(self, tenant: str, account_id: str, year: int, received_on: date) -> dict[str, Any]:
        now = self.clock.now()
        policy = self.policies(tenant, local_today(now))
        if policy.report_due is None:
            raise Refused("tenant", f"{tenant} has no annual discharger report (PP-SEW-REPORT)")
        if not self.repo.accounts({(tenant, account_id)}):
            raise NotFound("account_id", f"account {account_id} of {tenant} is not known to sampling")
        due = date(year + 1, *policy.report_due)
        event = AnnualReportReceived(
            occurred_at=now,
            tenant=tenant,
            account_id=account_id,
            year=year,
            received_on=received_on,
            due_on=due,
            late=received_on > due,
        )
        recorded = self.repo.record_report(tenant, account_id, year, received_on, event)
        return {"year": year, "due_on": due.isoformat(), "late": received_on > due, "repeated": not recorded}

    def charge_lab_invoice(
        self,
        tenant: str,
        account_id: str,
        reference: str,
        amount: Decimal,
        sample_ids: list[str],
        invoiced_on: date,
    ) -> SamplingCostCharged:
        now = self.clock.now()
        policy = self.policies(tenant, local_today(now))
        if policy.sample_cost is None:
            raise Refused("tenant", f"{tenant} passes no sampling costs through (PP-SEW-SAMPLE-COST)")
        if not self.repo.accounts({(tenant, account_id)}):
            raise NotFound("account_id", f"account {account_id} of {tenant} is not known to sampling")
        charge = SamplingCostCharged(
            occurred_at=now,
            tenant=tenant,
            account_id=account_id,
            charge_id=f"lab_invoice:{reference}",
            kind="lab_invoice",
            charged_on=invoiced_on,
            description=f"Lab invoice {reference}",
            quantity=Decimal(1),
            rate=amount,
            amount=round_line(amount),
            sample_ids=tuple(sample_ids),
            lab_invoice_reference=reference,
            tariff_version=policy.tariff_version,
        )
        self.repo.publish([charge])
        return charge

    # --- what staff see -------------------------------------------------------------------
    def account_view(self, tenant: str, account_id: str) -> dict[str, Any]:
        record = self.repo.account(tenant, account_id)
        if record.info is None:
            raise NotFound("account_id", f"account {account_id} of {tenant} is not known to sampling")
        samples: dict[str, dict[str, Any]] = {}
        for sample_id, rows in sorted(record.samples().items()):
            samples[sample_id] = {
                "sample_id": sample_id,
                "collected_on": rows[0].collected_on.isoformat(),
                "kind": rows[0].kind,
                "resample_of": rows[0].resample_of,
                "lab": rows[0].lab,
                "results": {r.parameter: str(r.value) for r in rows},
                "splits": [],
            }
        # PP-SEW-SPLIT: a discharger's split result is shown beside the utility's sample.
        for sample in list(samples.values()):
            target = samples.get(sample["resample_of"] or "")
            if sample["kind"] == "split" and target is not None:
                # PP-SEW-SPLIT: both results shown, with the discharger's minus the utility's.
                sample["difference_mg_l"] = {
                    p: str(Decimal(v) - Decimal(target["results"][p]))
                    for p, v in sample["results"].items()
                    if p in target["results"]
                }
                target["splits"].append(sample)
        self._satellite_dates(tenant, account_id, samples)
        classification = self.repo.classification(tenant, account_id)
        return {
            "tenant": tenant,
            "account_id": account_id,
            "sampling_point": record.info.sampling_point,
            "satellite": record.info.satellite,
            "private": record.info.private,
            "private_sewer": self._private_sewer(record.info, record.category),
            "category": record.category,
            "classification": classification.get("last_event") if classification else None,
            "samples": [
                s for s in samples.values() if s["kind"] != "split" or s["resample_of"] not in samples
            ],
            "decisions": [
                {
                    "original_sample_id": d.original_id,
                    "resample_id": d.resample_id,
                    "decision": d.choice,
                    "decided_by": d.decided_by,
                    "reason": d.reason,
                    "decided_at": d.decided_at.isoformat(),
                }
                for d in record.decisions.values()
            ],
        }

    def lab_suspense(self, tenant: str) -> list[dict[str, Any]]:
        """The lab lines in suspense (issue 26): each waiting for an account billing has not
        published (reported while it never arrives), or refused when it arrived (the
        cause named), by account, file and line."""
        self.policies(tenant, local_today(self.clock.now()))  # unknown tenant -> error
        return [
            {
                "account_id": str(i["account_id"]),
                "sample_id": str(i.get("sample_id", "")),
                "parameter": str(i.get("parameter", "")),
                "file_key": str(i.get("file_key", "")),
                "line": int(i["line"]),
                "outcome": str(i.get("outcome", "waiting")),
                "reason": str(i.get("reason", "")),
                "since": str(i.get("since", "")),
            }
            for i in self.repo.lab_suspense(tenant)
        ]

    def private_sewers(self, tenant: str) -> list[dict[str, Any]]:
        """PP-SEW-PRIVATE: the tenant's private sewers with their category, Category B for one
        that discharged above the thresholds (classified like any user). The registered
        accounts in one query and a batch read; a classification read per private sewer."""
        self.policies(tenant, local_today(self.clock.now()))  # unknown tenant -> error
        known = self.repo.accounts({(tenant, a) for a in self.repo.tenant_accounts(tenant)})
        listed = []
        for (_, account_id), info in sorted(known.items()):
            if not info.private:
                continue
            classification = self.repo.classification(tenant, account_id)
            category = classification.get("category") if classification else None
            listed.append(
                {
                    "account_id": account_id,
                    "sampling_point": info.sampling_point,
                    **(self._private_sewer(info, category) or {}),
                }
            )
        return listed

    @staticmethod
    def _private_sewer(info: AccountInfo, category: str | None) -> dict[str, Any] | None:
        """PP-SEW-PRIVATE: a private sewer's listing (its category, as any user's), or None."""
        if not info.private:
            return None
        return {
            "rule_id": "PP-SEW-PRIVATE",
            "category": category,
            "listed_as_category_b": category == "B",
        }

    def _satellite_dates(self, tenant: str, account_id: str, samples: dict[str, dict[str, Any]]) -> None:
        """PP-SEW-SAT-SAMPLE and PP-SEW-SAT-RESAMPLE on each sample of the account: when its
        certified results are due (as computed at intake, 18 working days after it was
        taken), when they were delivered and reminded, and the last day a resample may be
        requested once they were (3 days after receipt); null where the rule does not apply
        (not a satellite system's routine sample, or not delivered yet)."""
        deadlines = {d["sample_id"]: d for d in self.repo.account_deadlines(tenant, account_id)}
        request_days = self.policies(tenant, local_today(self.clock.now())).satellite_request_days
        for sample_id, sample in samples.items():
            deadline = deadlines.get(sample_id)
            delivered = deadline.get("delivered_on") if deadline else None
            sample.update(
                {
                    "results_due_on": deadline["due_on"] if deadline else None,
                    "results_due_rule_id": deadline.get("rule_id", "PP-SEW-SAT-SAMPLE") if deadline else None,
                    "results_reminded_on": deadline.get("reminded_on") if deadline else None,
                    "results_delivered_on": delivered,
                    "resample_window_ends_on": (
                        resample_window_ends_on(date.fromisoformat(delivered), request_days).isoformat()
                        if delivered
                        else None
                    ),
                    "resample_window_rule_id": "PP-SEW-SAT-RESAMPLE" if delivered else None,
                }
            )

    # --- the daily run --------------------------------------------------------------------
    def run_daily(self, today: date) -> DailyRun:
        """The day's exits, deadline reminders and breaches and report reminders; a day with
        nothing due costs one read of the mark (``common.due``)."""
        mark = self.repo.daily_due()
        if mark is not None and not mark.due(today):
            return DailyRun()
        exits = reminders = breaches = report_reminders = 0
        now = self.clock.now()
        candidates: list[date | None] = []
        for tenant in CLASSIFIED_TENANTS:
            policy = self.policies(tenant, today)
            clocks = self.repo.exits(tenant)
            candidates += [returns_on for _, returns_on in clocks]  # an exit left running is due again
            for account_id, returns_on in [(a, r) for a, r in clocks if r <= today]:
                record = self.repo.account(tenant, account_id)
                if record.info is None:
                    continue
                event: StrengthClassified = reclassify(
                    record,
                    repo=self.repo,
                    policy=policy,
                    trigger=f"exit:{returns_on.isoformat()}",
                    effective_from=returns_on,
                    touched=[],
                    now=now,
                    today=today,
                )
                exits += event.category != (record.category or "")
            for item in self.repo.deadlines(tenant):
                deadline = ResultsDeadline(
                    sample_id=item["sample_id"],
                    sampled_on=date.fromisoformat(item["sampled_on"]),
                    due_on=date.fromisoformat(item["due_on"]),
                    remind_on=date.fromisoformat(item["remind_on"]),
                )
                delivered = date.fromisoformat(item["delivered_on"]) if "delivered_on" in item else None
                actions = deadline_actions(
                    deadline, today, delivered, "reminded_on" in item, "breached_on" in item
                )
                common = {
                    "occurred_at": now,
                    "tenant": tenant,
                    "account_id": item["account_id"],
                    "sample_id": deadline.sample_id,
                    "sampled_on": deadline.sampled_on,
                    "due_on": deadline.due_on,
                }
                if actions.remind:
                    self.repo.mark_deadline(
                        tenant,
                        item["account_id"],
                        deadline.sample_id,
                        "reminded_on",
                        today.isoformat(),
                        SatelliteResultsDueSoon(reminded_on=today, **common),
                    )
                    reminders += 1
                if actions.breach:
                    self.repo.mark_deadline(
                        tenant,
                        item["account_id"],
                        deadline.sample_id,
                        "breached_on",
                        today.isoformat(),
                        SatelliteResultsOverdue(recorded_on=today, **common),
                    )
                    breaches += 1
                candidates.append(
                    deadline_next(
                        deadline,
                        today,
                        delivered is not None,
                        actions.remind or "reminded_on" in item,
                        actions.breach or "breached_on" in item,
                    )
                )
            report_reminders += self._report_reminders(
                tenant, policy.report_due, policy.report_reminder_days, today
            )
            candidates.append(report_window_next(policy.report_due, policy.report_reminder_days, today))
        self.repo.set_daily_due(next_due(today, candidates), mark)
        return DailyRun(exits, reminders, breaches, report_reminders)

    def _report_reminders(
        self, tenant: str, report_due: tuple[int, int] | None, days_before: tuple[int, ...], today: date
    ) -> int:
        """PP-SEW-REPORT: on each reminder day before February 10, remind who has not filed."""
        if report_due is None:
            return 0
        due = date(today.year, *report_due)
        if today > due:
            return 0
        from datetime import timedelta

        reminder_days = sorted(due - timedelta(days=d) for d in days_before)
        passed = [d for d in reminder_days if d <= today]
        if not passed:
            return 0
        reminder_on = passed[-1]
        year = due.year - 1
        filed = self.repo.reports_received(tenant, year)
        known = self.repo.accounts({(tenant, a) for a in self.repo.tenant_accounts(tenant)})
        events: list[Event] = [
            AnnualReportReminderDue(
                occurred_at=self.clock.now(),
                tenant=tenant,
                account_id=account_id,
                year=year,
                due_on=due,
                reminder_on=reminder_on,
            )
            for (_, account_id), info in sorted(known.items())
            if info.nonresidential and account_id not in filed
        ]
        self.repo.publish(events)
        return len(events)


__all__ = ["Conflict", "DailyRun", "NotFound", "PermanentError", "Refused", "SamplingService"]
