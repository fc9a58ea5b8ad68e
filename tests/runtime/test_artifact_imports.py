"""A function run locally imports only what its artifact holds in AWS (issue 30).

`sam build` gives each function its own service's package and libraries, and the layers'
`common`, events modules and shared libraries (template.yaml). The local runtime's workers
refuse anything else (`sewerbill.local.worker.confine_imports`, with the rules of
`sewerbill.local.template.import_rules`), so a function that reaches another service's module
or a library its service does not install fails here as it would at its cold start in AWS.
tests/template/test_built_artifacts.py checks the rules against a real build.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

from sewerbill.local.template import artifacts, code_dirs, import_rules
from sewerbill.samtemplate import load_template

REPO = Path(__file__).resolve().parents[2]
SAM = load_template(REPO / "template.yaml")
EVENTS = {f"{p.parent.name}.events" for p in (REPO / "services").glob("*/events.py")}


def test_every_function_runs_from_the_services_folder_as_its_artifact_nests_it() -> None:
    folders = code_dirs(SAM, REPO)
    assert len(folders) >= 28
    assert set(folders.values()) == {(REPO / "services").resolve()}


def test_an_artifact_holds_its_own_service_common_every_events_module_and_its_own_libraries() -> None:
    found = artifacts(SAM, REPO)
    for logical_id, res in SAM["Resources"].items():
        if res["Type"] != "AWS::Serverless::Function":
            continue
        service = res["Properties"]["Handler"].split(".")[0]
        assert found[logical_id].modules == {service, "common"} | EVENTS, logical_id
        assert "pydantic" in found[logical_id].distributions, logical_id
        assert ("reportlab" in found[logical_id].distributions) == (service == "notices"), logical_id
        assert ("holidays" in found[logical_id].distributions) == (service == "sampling"), logical_id
        assert ("ijson" in found[logical_id].distributions) == (service == "stormwater"), logical_id


def _imports_in_worker(logical_id: str, modules: list[str]) -> dict[str, str]:
    """Each module's import, in a fresh process confined as the function's worker is: "ok" or
    the error. The process first imports what the forkserver preloads for every function."""
    rules = import_rules(SAM, REPO)[logical_id]
    script = textwrap.dedent(
        f"""
        import importlib, json, sys
        sys.path.insert(0, {str(REPO / "services")!r})
        import reportlab.pdfgen.canvas, jinja2, notices.events, billing.domain  # the preload's kind
        from sewerbill.local.worker import confine_imports
        confine_imports({json.dumps(rules)})
        out = {{}}
        for name in {json.dumps(modules)}:
            try:
                importlib.import_module(name)
                out[name] = "ok"
            except ImportError as exc:
                out[name] = f"{{type(exc).__name__}}: {{exc}}"
        print(json.dumps(out))
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=True
    )
    return json.loads(done.stdout.splitlines()[-1])


def test_a_billing_function_imports_its_service_and_the_layer_but_not_notices_or_its_pdf_library() -> None:
    got = _imports_in_worker(
        "BillingApiFunction",
        [
            "billing.handlers.api",
            "common.tariff_files",
            "notices.events",
            "notices.rendering",
            "reportlab",
            "ijson",
        ],
    )
    assert got["billing.handlers.api"] == "ok"
    assert got["common.tariff_files"] == "ok"
    assert got["notices.events"] == "ok"  # the layer's events module
    for missing in ("notices.rendering", "reportlab", "ijson"):
        assert got[missing].startswith("ModuleNotFoundError: No module named"), (missing, got[missing])
        assert "artifact" in got[missing]


def test_a_notices_function_imports_its_pdf_library_but_not_billings_domain() -> None:
    got = _imports_in_worker(
        "NoticesApiFunction", ["notices.handlers.api", "reportlab.pdfgen.canvas", "billing.domain"]
    )
    assert got["notices.handlers.api"] == "ok"
    assert got["reportlab.pdfgen.canvas"] == "ok"
    assert got["billing.domain"].startswith("ModuleNotFoundError"), got["billing.domain"]
