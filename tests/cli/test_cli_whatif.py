"""`sewerbill preview | eru | classify` as CONTRACTS.md specifies them.

Bad input: exit 2, ONE line on stderr naming the field, never a traceback.
"""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
SEWERBILL = Path(sys.executable).parent / "sewerbill"

# The CONTRACTS.md preview example with the fields that apply to grafton-sewer (the
# contract's document lists every field of every tenant for illustration; sent as is to
# grafton-sewer it is refused at `account.zone`, tested below).
CONTRACT_EXAMPLE: dict[str, Any] = {
    "tenant": "grafton-sewer",
    "period": {"start": "2026-07-01", "end": "2026-10-01"},
    "account": {"class": "residential", "meter_size": "5/8", "dwelling_units": 1},
    "water_gallons": 23000,
    "strength": {"bod": 250, "tss": 300, "phosphorus": 8, "tkn": 25, "fog": 50},
}
CONTRACT_DOCUMENT_AS_PRINTED = """{
  "tenant": "grafton-sewer",
  "period": {"start": "2026-07-01", "end": "2026-10-01"},
  "account": {
    "class": "residential",
    "zone": "PP",
    "meter_size": "5/8",
    "dwelling_units": 1,
    "rec_units": "1.0"
  },
  "water_gallons": 23000,
  "winter_average_gallons": 4000,
  "estimated_gallons": 0,
  "strength": {"bod": 250, "tss": 300, "phosphorus": 8, "tkn": 25, "fog": 50},
  "bod900_violation_days": 0,
  "samples_collected": 0,
  "total_recs": "1200",
  "parcel": {
    "use": "nonresidential",
    "area_sqft": 43560,
    "impervious_sqft": 30000,
    "woods_sqft": 0,
    "excluded_sqft": 0,
    "credit_percent": "0"
  }
}"""
PP_SEWER: dict[str, Any] = {
    "tenant": "pleasant-prairie-sewer",
    "period": {"start": "2026-07-01", "end": "2026-08-01"},
    "account": {"class": "nonresidential", "zone": "PP", "meter_size": "1"},
    "water_gallons": 5000,
}
STORM: dict[str, Any] = {
    "tenant": "pleasant-prairie-stormwater",
    "period": {"start": "2026-07-01", "end": "2026-08-01"},
    "parcel": {"use": "nonresidential", "area_sqft": 43560, "impervious_sqft": 30000, "credit_percent": "10"},
}


GRAFTON_UNMETERED_BOD_300: dict[str, Any] = {
    "tenant": "grafton-sewer",
    "period": {"start": "2026-07-01", "end": "2026-10-01"},
    "account": {"class": "nonresidential"},
    "estimated_gallons": 30000,
    "strength": {"bod": 300},
}
SULLIVAN: dict[str, Any] = {
    "tenant": "sullivan-sewer",
    "period": {"start": "2026-07-01", "end": "2026-10-01"},
    "account": {"class": "nonresidential", "meter_size": "2", "rec_units": "2.5"},
    "water_gallons": 100000,
    "strength": {"bod": 950},
    "bod900_violation_days": 2,
    "total_recs": "1200",
}


def changed(base: dict[str, Any], **changes: Any) -> dict[str, Any]:
    out = copy.deepcopy(base)
    for path, value in changes.items():
        *parents, last = path.split("__")
        target = out
        for p in parents:
            target = target[p]
        if value is ...:
            target.pop(last, None)
        else:
            target[last] = value
    return out


# --- preview: the contract example, through the real console script ------------------------


def test_preview_of_the_contract_example(sewerbill):
    run = sewerbill("preview", CONTRACT_EXAMPLE)
    assert run.code == 0, run.stderr
    assert run.stderr == ""
    out = run.json
    assert out["tenant"] == "grafton-sewer"
    assert out["period"] == {"start": "2026-07-01", "end": "2026-10-01"}
    assert out["tariff_versions"] == ["grafton-sewer@2025-01-01"]
    first = out["lines"][0]
    # CONTRACTS.md output example, line for line.
    assert {k: first[k] for k in ("rule_id", "description", "quantity", "unit", "rate", "amount")} == {
        "rule_id": "GR-SVC",
        "description": 'Quarterly service charge, 5/8" meter',
        "quantity": "1",
        "unit": "quarter",
        "rate": "45.00",
        "amount": "45.00",
    }
    assert first["details"]["funds"] == {"replacement": "5.40", "om": "39.60"}
    # GR-VOL 23 x 6.50 = 149.50; GR-HIGH BOD 4.32, TSS 3.65, P 2.11, TKN 1.06 (tests/rating).
    assert [(line["rule_id"], line["amount"]) for line in out["lines"]] == [
        ("GR-SVC", "45.00"),
        ("GR-VOL", "149.50"),
        ("GR-HIGH", "4.32"),
        ("GR-HIGH", "3.65"),
        ("GR-HIGH", "2.11"),
        ("GR-HIGH", "1.06"),
    ]
    assert out["total"] == "205.64"
    # Money, rates and quantities are decimal strings: no float anywhere in the output.
    assert not any(isinstance(v, float) for v in _leaves(json.loads(run.stdout, parse_float=float)))
    assert all(isinstance(line[k], str) for line in out["lines"] for k in ("quantity", "rate", "amount"))


def _leaves(value: Any):
    if isinstance(value, dict):
        for v in value.values():
            yield from _leaves(v)
    elif isinstance(value, list):
        for v in value:
            yield from _leaves(v)
    else:
        yield value


def test_the_contract_document_as_printed_is_refused_at_the_first_foreign_field(sewerbill):
    line = sewerbill("preview", CONTRACT_DOCUMENT_AS_PRINTED).one_error_line()
    assert line.startswith("account.zone: ")
    assert "pleasant-prairie-sewer" in line


def test_preview_reads_stdin_through_python_dash_m(tmp_path):
    proc = subprocess.run(
        [sys.executable, "-m", "sewerbill", "preview", "-"],
        input=json.dumps(STORM),
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
    )
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert [line["rule_id"] for line in out["lines"]] == ["PP-CWU-BASE", "PP-CWU-ERU", "PP-CWU-CREDIT"]
    assert out["lines"][2]["amount"].startswith("-")


def test_unknown_tenant_in_a_real_subprocess(sewerbill):
    line = sewerbill("preview", changed(CONTRACT_EXAMPLE, tenant="kenosha-sewer")).one_error_line()
    assert line.startswith("tenant: 'kenosha-sewer' is not a tenant")


def test_meter_size_not_in_the_tariff_in_a_real_subprocess(sewerbill):
    line = sewerbill("preview", changed(CONTRACT_EXAMPLE, account__meter_size="7/8")).one_error_line()
    assert line == "account.meter_size: '7/8' is not a meter size of tenant grafton-sewer"


def test_malformed_json_in_a_real_subprocess(sewerbill):
    line = sewerbill("preview", '{"tenant": "grafton-sewer",').one_error_line()
    assert line.startswith("SCENARIO: not valid JSON")


def test_missing_file_in_a_real_subprocess(sewerbill):
    line = sewerbill("preview", None, path="/nonexistent/scenario.json").one_error_line()
    assert line == "SCENARIO: no such file: /nonexistent/scenario.json"


def test_console_script_is_installed():
    assert SEWERBILL.exists()


# --- preview: every bad input of CONTRACTS.md, in process ---------------------------------


@pytest.mark.parametrize(
    ("document", "field", "words"),
    [
        (changed(CONTRACT_EXAMPLE, tenant="nowhere"), "tenant", ["nowhere"]),
        (
            changed(CONTRACT_EXAMPLE, account__meter_size="7/8"),
            "account.meter_size",
            ["7/8", "grafton-sewer"],
        ),
        # a rate not published for a zone: tenant, zone, meter size and version; never zero
        (
            changed(PP_SEWER, account__zone="LM"),
            "account.meter_size",
            ["pleasant-prairie-sewer", "zone LM", 'meter size 1"', "pleasant-prairie-sewer@2019-10-01"],
        ),
        (changed(PP_SEWER, account__zone="XX"), "account.zone", ["XX"]),
        # fields that do not apply to the tenant
        (changed(CONTRACT_EXAMPLE, account__zone="PP"), "account.zone", ["pleasant-prairie-sewer"]),
        (changed(CONTRACT_EXAMPLE, total_recs="1200"), "total_recs", ["sullivan-sewer"]),
        (changed(PP_SEWER, estimated_gallons=0), "estimated_gallons", ["grafton-sewer"]),
        (changed(STORM, water_gallons=5), "water_gallons", []),
        (changed(CONTRACT_EXAMPLE, parcel=STORM["parcel"]), "parcel", []),
        # credits
        (changed(STORM, parcel__credit_percent="31"), "parcel.credit_percent", ["30"]),
        (
            changed(STORM, parcel__use="residential", parcel__impervious_sqft=2000),
            "parcel.credit_percent",
            ["nonresidential"],
        ),
        # negatives, dates
        (changed(CONTRACT_EXAMPLE, water_gallons=-100), "water_gallons", ["negative"]),
        (changed(CONTRACT_EXAMPLE, strength={"bod": -1}), "strength.bod", ["negative"]),
        (changed(STORM, parcel__area_sqft=-1), "parcel.area_sqft", []),
        (changed(CONTRACT_EXAMPLE, period={"start": "2026-07-01", "end": "2026-06-01"}), "period.end", []),
        (
            changed(CONTRACT_EXAMPLE, period={"start": "2026-07-01", "end": "2026-08-01"}),
            "period",
            ["3 months"],
        ),
        (changed(CONTRACT_EXAMPLE, period={"start": "2020-01-01", "end": "2020-04-01"}), "period.start", []),
        # Pleasant Prairie residential rules, metering rules
        (
            changed(PP_SEWER, account__class="residential", account__dwelling_units=5),
            "account.dwelling_units",
            [],
        ),
        (changed(PP_SEWER, account__class="residential", strength={"bod": 300}), "strength", []),
        (changed(PP_SEWER, account__meter_size=...), "account.meter_size", ["grafton-sewer"]),
        (changed(CONTRACT_EXAMPLE, account__meter_size=...), "water_gallons", ["unmetered"]),
        (changed(CONTRACT_EXAMPLE, estimated_gallons=20000), "estimated_gallons", []),
        (changed(CONTRACT_EXAMPLE, water_gallons=...), "water_gallons", ["required"]),
        (changed(CONTRACT_EXAMPLE, account__class="industrial"), "account.class", []),
        (changed(CONTRACT_EXAMPLE, extra=1), "extra", ["unknown field"]),
        (changed(CONTRACT_EXAMPLE, water_gallons="23,000 gal"), "water_gallons", []),
        (changed(STORM, parcel__use="farm"), "parcel.use", []),
        ([1, 2, 3], "scenario", []),
        # issue 8: high strength on an unmetered Grafton account (GR-HIGH is for metered
        # service): unmetered nonresidential, 30,000 gal estimated, BOD 300 billed 251.27
        (GRAFTON_UNMETERED_BOD_300, "strength", ["bod 300", "metered service", "GR-HIGH"]),
        # issue 8: Sullivan REC units of a nonresidential account have no default (SU-REC)
        (changed(SULLIVAN, account__rec_units=...), "account.rec_units", ["nonresidential", "SU-REC"]),
        # issue 8: 100 violation days in a 92-day quarter billed 100,000.00 (SU-BOD900)
        (changed(SULLIVAN, bod900_violation_days=100), "bod900_violation_days", ["100", "92 days"]),
    ],
)
def test_every_bad_preview_input_exits_2_naming_the_field(cli, document, field, words):
    line = cli("preview", document).one_error_line()
    assert line.startswith(f"{field}: "), line
    for word in words:
        assert word in line


@pytest.mark.parametrize(
    "text", ["", "{", "[1,", '{"a": NaN}', '{"a": Infinity}', "not json", '{"a": 1} trailing']
)
def test_malformed_json_exits_2_with_one_line(cli, text):
    assert cli("preview", text).one_error_line().startswith("SCENARIO: not valid JSON")


def test_floats_in_json_are_read_as_decimals(cli):
    run = cli("preview", changed(CONTRACT_EXAMPLE, water_gallons=23000.5, strength=...))
    assert run.code == 0, run.stderr
    vol = run.json["lines"][1]
    # 23.0005 kgal x 6.50 = 149.50325 -> 149.50
    assert (vol["quantity"], vol["amount"]) == ("23.0005", "149.50")


# --- preview: notes, a zero that says why (issue 8) ---------------------------------------


def test_preview_lists_no_notes_when_every_rule_charged(cli):
    run = cli("preview", CONTRACT_EXAMPLE)
    assert run.code == 0, run.stderr
    assert run.json["notes"] == []


def test_an_exempt_parcel_bills_zero_and_says_why(sewerbill):
    document = changed(STORM, parcel={"use": "agricultural", "area_sqft": 43560, "impervious_sqft": 0})
    run = sewerbill("preview", document)
    assert run.code == 0, run.stderr
    assert (run.json["lines"], run.json["total"]) == ([], "0.00")
    assert run.json["notes"] == [{"rule_id": "PP-CWU-EXEMPT", "text": "agricultural land is exempt"}]


def test_a_fog_only_category_b_user_is_noted(cli):
    # FOG 150 > 100: Category B, no published rate. 1" 22.50 + 5 kgal x 4.49 = 22.45.
    run = cli("preview", changed(PP_SEWER, strength={"fog": 150}))
    assert run.code == 0, run.stderr
    assert [(line["rule_id"], line["amount"]) for line in run.json["lines"]] == [
        ("PP-SEW-SVC", "22.50"),
        ("PP-SEW-VOL", "22.45"),
    ]
    assert run.json["total"] == "44.95"
    (note,) = run.json["notes"]
    assert note["rule_id"] == "PP-SEW-SURCHARGE"
    assert "FOG 150 mg/l" in note["text"] and "Category B" in note["text"]


def test_a_credit_held_to_the_cap_is_noted_and_its_line_carries_the_cap(cli):
    # A 250 sq ft pervious nonresidential parcel: 0.349833 in / 12 x 250 = 7.2882 cu ft,
    # / 627.0084 = 0.0116 -> 0.01 ERU; ERU charge 0.01 x 6.00 = 0.06; a 30% credit is
    # 0.018: half-up 0.02 would pass the cap, so it is held to 0.01 (rounded down).
    parcel = {"use": "nonresidential", "area_sqft": 250, "impervious_sqft": 0, "credit_percent": "30"}
    run = cli("preview", changed(STORM, parcel=parcel))
    assert run.code == 0, run.stderr
    credit = run.json["lines"][-1]
    assert (credit["rule_id"], credit["quantity"], credit["rate"], credit["amount"]) == (
        "PP-CWU-CREDIT",
        "0.01",
        "-1.80",
        "-0.01",
    )
    assert "held to the cap" in credit["description"]
    assert (credit["details"]["eru_charge"], credit["details"]["cap_percent"]) == ("0.06", "30")
    assert run.json["total"] == "2.05"  # 2.00 base + 0.06 ERU - 0.01 credit
    assert [n["rule_id"] for n in run.json["notes"]] == ["PP-CWU-CREDIT"]


def test_sullivan_every_rule_of_the_example(cli):
    # 100,000 gal; SU-USE 100 x 7.25 = 725.00; SU-REC 2.5 x 37.50 = 93.75;
    # SU-SURCHARGE (950 - 400) x 0.1 x 8.34 = 458.7 lb x 0.30 = 137.61; SU-BOD900 2 x 1,000.00.
    run = cli("preview", SULLIVAN)
    assert run.code == 0, run.stderr
    assert [(line["rule_id"], line["amount"]) for line in run.json["lines"]] == [
        ("SU-USE", "725.00"),
        ("SU-REC", "93.75"),
        ("SU-SURCHARGE", "137.61"),
        ("SU-BOD900", "2000.00"),
    ]
    assert run.json["total"] == "2956.36"


# --- eru ---------------------------------------------------------------------------------


def test_eru_of_the_standard_parcel(cli):
    # The standard ERU parcel (15,100 sq ft, 18.21% impervious) entered as nonresidential
    # (all impervious surface given) is exactly 1.00 ERU (CONTRACTS.md example).
    parcel = {"use": "nonresidential", "area_sqft": 15100, "impervious_sqft": "2749.71"}
    run = cli("eru", {"tenant": "pleasant-prairie-stormwater", "parcel": parcel})
    assert run.code == 0, run.stderr
    assert run.json == {
        "eru": "1.00",
        "composite_cn": "78.3704",
        "runoff_in": "0.498285",
        "runoff_cuft": "627.0084",
        "standard_runoff_cuft": "627.0084",
        "counted_area_sqft": "15100",
        "exempt": False,
    }


def test_a_large_parcel_s_eru_can_be_redone_from_the_output(sewerbill):
    # Issue 8: 100,000 sq ft, 2,500 impervious showed 3069.17 / 627.03 = 4.89 beside 4.90.
    # Now from unrounded values: 3069.2638 / 627.0084 = 4.8951 -> 4.90 (tests/stormwater).
    parcel = {"use": "nonresidential", "area_sqft": 100000, "impervious_sqft": 2500}
    run = sewerbill("eru", {"tenant": "pleasant-prairie-stormwater", "parcel": parcel})
    assert run.code == 0, run.stderr
    out = run.json
    assert (out["eru"], out["runoff_in"], out["runoff_cuft"], out["standard_runoff_cuft"]) == (
        "4.90",
        "0.368312",
        "3069.2638",
        "627.0084",
    )
    redone = (Decimal(out["runoff_cuft"]) / Decimal(out["standard_runoff_cuft"])).quantize(
        Decimal("0.01"), rounding=ROUND_HALF_UP
    )
    assert str(redone) == out["eru"]


def test_eru_of_an_exempt_parcel(sewerbill):
    parcel = {"use": "right_of_way", "area_sqft": 20000, "impervious_sqft": 15000}
    run = sewerbill("eru", {"tenant": "pleasant-prairie-stormwater", "parcel": parcel})
    assert run.code == 0, run.stderr
    assert run.json["exempt"] is True
    assert run.json["eru"] == "0"


@pytest.mark.parametrize(
    ("document", "field"),
    [
        ({"tenant": "grafton-sewer", "parcel": {}}, "tenant"),
        ({"parcel": {}}, "tenant"),
        ({"tenant": "pleasant-prairie-stormwater"}, "parcel"),
        (
            {"tenant": "pleasant-prairie-stormwater", "parcel": {"use": "residential", "area_sqft": 1}},
            "parcel.impervious_sqft",
        ),
        (
            {
                "tenant": "pleasant-prairie-stormwater",
                "parcel": {"use": "x", "area_sqft": 1, "impervious_sqft": 0},
            },
            "parcel.use",
        ),
        (
            {
                "tenant": "pleasant-prairie-stormwater",
                "parcel": {"use": "residential", "area_sqft": 100, "impervious_sqft": 200},
            },
            "parcel.area_sqft",
        ),
        (
            {
                "tenant": "pleasant-prairie-stormwater",
                "parcel": {
                    "use": "residential",
                    "area_sqft": 100,
                    "impervious_sqft": 10,
                    "credit_percent": 5,
                },
            },
            "parcel.credit_percent",
        ),
        (
            {"tenant": "pleasant-prairie-stormwater", "parcel": {"use": "residential", "color": 1}},
            "parcel.color",
        ),
        ({"tenant": "pleasant-prairie-stormwater", "parcel": {}, "x": 1}, "x"),
    ],
)
def test_bad_eru_input_exits_2_naming_the_field(cli, document, field):
    assert cli("eru", document).one_error_line().startswith(f"{field}: ")


# --- classify ----------------------------------------------------------------------------


def test_classify_contract_example(sewerbill):
    document = {
        "tenant": "pleasant-prairie-sewer",
        "as_of": "2027-06-30",
        "results": [{"sampled_on": "2025-01-15", "bod": 220, "tss": 150, "phosphorus": 4, "fog": 40}],
    }
    run = sewerbill("classify", document)
    assert run.code == 0, run.stderr
    assert run.json == {
        "category": "B",
        "since": "2025-01-15",
        "history": [{"from": "2025-01-15", "category": "B"}],
        "basis": {"sampled_on": "2025-01-15", "bod": "220", "tss": "150", "phosphorus": "4", "fog": "40"},
        "notes": [],
    }


def test_classify_lists_each_result_dated_after_as_of_in_notes(cli):
    # CONTRACTS.md classify: "results dated after as_of are ignored and listed in notes".
    # Grafton's latest result decides (GR-REASSIGN): the high result of 2026-07-01 is after
    # as_of 2026-06-30, so it is ignored and the user stays normal on the compliant
    # result of 2026-02-01; the note names the ignored result.
    document = {
        "tenant": "grafton-sewer",
        "as_of": "2026-06-30",
        "results": [
            {"sampled_on": "2026-07-01", "tkn": 25},
            {"sampled_on": "2026-02-01", "tkn": 10},
            {"sampled_on": "2026-06-30", "tkn": 12},
        ],
    }
    run = cli("classify", document)
    assert run.code == 0, run.stderr
    assert run.json["category"] == "normal"
    assert run.json["since"] == "2026-02-01"
    assert run.json["basis"] is None
    assert run.json["notes"] == [
        {
            "sampled_on": "2026-07-01",
            "text": "result sampled on 2026-07-01 is dated after as_of 2026-06-30: ignored",
        }
    ]


def test_classify_grafton(cli):
    document = {
        "tenant": "grafton-sewer",
        "as_of": "2026-06-30",
        "results": [{"sampled_on": "2026-02-01", "tkn": 25}],
    }
    run = cli("classify", document)
    assert run.code == 0, run.stderr
    assert run.json["category"] == "high"
    # TKN 25 > 20: the surcharge basis is that result (only what was measured is shown).
    assert run.json["basis"] == {"sampled_on": "2026-02-01", "tkn": "25"}


@pytest.mark.parametrize(
    ("document", "field"),
    [
        ({"tenant": "pleasant-prairie-stormwater", "as_of": "2026-01-01", "results": []}, "tenant"),
        ({"tenant": "grafton-sewer", "results": []}, "as_of"),
        (
            {"tenant": "grafton-sewer", "as_of": "2026-01-01", "results": [{"sampled_on": "x", "bod": 1}]},
            "results[0].sampled_on",
        ),
        (
            {
                "tenant": "grafton-sewer",
                "as_of": "2026-01-01",
                "results": [{"sampled_on": "2025-01-01", "bod": -1}],
            },
            "results[0].bod",
        ),
    ],
)
def test_bad_classify_input_exits_2_naming_the_field(cli, document, field):
    assert cli("classify", document).one_error_line().startswith(f"{field}: ")
