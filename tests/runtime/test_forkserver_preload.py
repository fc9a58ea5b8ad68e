"""The forkserver imports the functions' pure modules once, and only modules that read
nothing of a function's configuration, so a worker forked with them behaves as one that
imported them at its own cold start (`sewerbill.local.invoker.code_preload`)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from sewerbill.local.invoker import PRELOAD, code_preload
from sewerbill.local.runtime import _template_code

ROOT = Path(__file__).resolve().parents[2]
SERVICES = ROOT / "services"


def template_preload() -> list[str]:
    from sewerbill import samtemplate

    sam = samtemplate.load_template(ROOT / "template.yaml")
    code = _template_code(sam, ROOT)
    assert {folder for folder, _ in code} == {SERVICES.resolve()}  # one shared CodeUri
    return code_preload(SERVICES.resolve(), [handler for _, handler in code])


def test_the_template_s_functions_preload_their_events_and_domains_and_nothing_that_reads_configuration() -> (
    None
):
    modules = template_preload()

    assert {"billing.events", "metering.events", "common.messages", "billing.domain.cycles"} <= set(modules)
    for module in modules:
        layer = module.split(".")
        assert layer[0] == "common" or layer[1] in ("events", "domain"), module
        assert not {"handlers", "composition", "adapters", "config", "observability"} & set(layer), module


LIBRARY_SWITCHES = {"PYDANTIC_DISABLE_PLUGINS", "IJSON_BACKEND"}


def test_importing_the_preload_reads_no_environment_variable() -> None:
    """In a fresh interpreter that has imported the libraries (the forkserver's preload so
    far) and whose os.environ then records every read: the code's modules read none of a
    function's variables and import neither common.observability nor common.config."""
    modules = template_preload()
    probe = f"""
import json, os, sys
sys.path.insert(0, {str(SERVICES)!r})
import importlib
for name in {PRELOAD!r}:  # the libraries, imported by the forkserver first (as before)
    importlib.import_module(name)
read = []
class Recording(type(os.environ)):
    def __getitem__(self, key):
        read.append(key)
        return super().__getitem__(key)
    def __contains__(self, key):
        read.append(key)
        return super().__contains__(key)
os.environ = Recording(os.environ._data, os.environ.encodekey, os.environ.decodekey,
                       os.environ.encodevalue, os.environ.decodevalue)
for name in {modules!r}:
    importlib.import_module(name)
print(json.dumps({{"read": read, "loaded": sorted(m for m in sys.modules if m.split(".")[0] in
    ("common", "billing", "metering", "notices", "sampling", "stormwater", "webportal"))}}))
"""
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    seen = json.loads(done.stdout.strip().splitlines()[-1])

    # only two libraries' own switches (pydantic's plugins at each model, ijson's backend),
    # which no function's configuration sets: nothing of a function's environment
    assert set(seen["read"]) <= LIBRARY_SWITCHES
    template = (ROOT / "template.yaml").read_text()
    assert not [name for name in LIBRARY_SWITCHES if name in template]
    assert "common.observability" not in seen["loaded"] and "common.config" not in seen["loaded"]
    assert not [m for m in seen["loaded"] if ".handlers" in m or ".composition" in m or ".adapters" in m]
    assert "billing.events" in seen["loaded"]


def test_a_folder_without_a_domain_or_events_preloads_nothing_of_it(tmp_path: Path) -> None:
    (tmp_path / "fn").mkdir()
    (tmp_path / "fn" / "__init__.py").write_text("")
    (tmp_path / "fn" / "app.py").write_text("import os\nNAME = os.environ['X']\n")
    assert code_preload(tmp_path, ["fn.app.handler"]) == []


def test_a_worker_s_sessions_share_the_forkserver_s_botocore_data_and_a_session_with_its_own_data_path_does_not() -> (
    None
):
    """In a process that imported `sewerbill.local.botodata` (the forkserver's preload, so every
    worker): a session on botocore's default data path gets a loader of its own (its own search
    paths) with the reads the forkserver made as its cache, whose models are what a fresh
    loader reads; a session given AWS_DATA_PATH gets a loader and a cache of its own, as
    before; and the warm-up left the process's default session unmade."""
    probe = """
import json, os, tempfile
import boto3, botocore.loaders, botocore.session
from sewerbill.local import botodata
assert boto3.DEFAULT_SESSION is None
shared = botocore.session.Session().get_component("data_loader")
own = botocore.loaders.Loader()
models_equal = all(
    shared.load_service_model(s, "service-2") == own.load_service_model(s, "service-2")
    and shared.load_service_model(s, "endpoint-rule-set-1") == own.load_service_model(s, "endpoint-rule-set-1")
    for s in botodata.SERVICES
)
boto3_loader = boto3.session.Session()._loader  # boto3 adds its own data path to its session's
own_paths = boto3_loader._cache is shared._cache and boto3_loader.search_paths != shared.search_paths
os.environ["AWS_DATA_PATH"] = tempfile.mkdtemp()
elsewhere = botocore.session.Session().get_component("data_loader")
print(json.dumps({
    "shared": shared._cache is botodata.LOADER._cache and shared is not botodata.LOADER,
    "own_paths": own_paths,
    "warmed": "dynamodb" in str(list(botodata.LOADER._cache)),
    "models_equal": models_equal,
    "elsewhere": elsewhere._cache is not botodata.LOADER._cache
    and os.environ["AWS_DATA_PATH"] in elsewhere.search_paths,
}))
"""
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    seen = json.loads(done.stdout.strip().splitlines()[-1])

    assert seen == {
        "shared": True,
        "own_paths": True,
        "warmed": True,
        "models_equal": True,
        "elsewhere": True,
    }


def test_the_forkserver_freezes_what_it_preloaded_after_importing_it_all() -> None:
    """The last module of the preload collects and freezes the forkserver's heap, so a
    worker's full collections walk only what the worker made."""
    from sewerbill.local import invoker

    invoker._forkserver(template_preload())  # what the runtime sets before starting it
    listed = invoker._preload
    assert listed[-1] == invoker.FROZEN
    probe = f"""
import gc, importlib, sys
sys.path.insert(0, {str(SERVICES)!r})
for name in {listed!r}:
    importlib.import_module(name)
print(gc.get_freeze_count())
"""
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert int(done.stdout.strip().splitlines()[-1]) > 100_000


def test_functions_run_in_the_runtime_s_process_get_the_forkserver_s_libraries_when_it_starts() -> None:
    """isolate="modules": the libraries `PRELOAD` lists are imported when the runtime starts,
    before any function's cold start (as the forkserver imports them for the processes);
    isolate="process": the runtime's own process does not import them for the functions."""
    probe = f"""
import sys
from datetime import UTC, datetime
from pathlib import Path
sys.path[:0] = [{str(ROOT / "infra")!r}, {str(Path(__file__).parent)!r}]
from conftest import FIXTURES, START
from sewerbill.local import LocalRuntime
before = "aws_xray_sdk.core" in sys.modules
with LocalRuntime.start(FIXTURES / "template.yaml", start_time=START, stack_name="p",
                        isolate=sys.argv[1]) as rt:
    print(before, all(name in sys.modules for name in {PRELOAD!r}), len(rt.invocations))
"""
    answers = {}
    for mode in ("modules", "process"):
        done = subprocess.run(
            [sys.executable, "-c", probe, mode], capture_output=True, text=True, check=True, cwd=ROOT
        )
        answers[mode] = done.stdout.strip().splitlines()[-1]
    assert answers == {"modules": "False True 0", "process": "False False 0"}
