"""The stormwater domain is pure (STYLE.md 1, X-MONEY): no I/O, AWS, clock or float."""

import ast
from pathlib import Path

import stormwater.domain

DOMAIN = Path(stormwater.domain.__file__).parent
FORBIDDEN = {
    "boto3",
    "botocore",
    "aws_lambda_powertools",
    "os",
    "sys",
    "io",
    "pathlib",
    "socket",
    "time",
    "random",
}
# ``datetime`` is allowed for its types: the service's rules take ``today``/``now`` as inputs
# (time is an input), or ask an injected Clock. Reading the system clock is forbidden, checked below and in
# tests/test_architecture.py.
CLOCK_READS = ("datetime.now(", "date.today(", "datetime.utcnow(", "datetime.today(")


def _modules():
    files = sorted(DOMAIN.glob("*.py"))
    assert {f.name for f in files} >= {"errors.py", "eru.py", "tr55.py"}
    return files


def test_domain_imports_no_io_aws_or_clock_modules():
    for path in _modules():
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                names = [node.module or ""]
            else:
                continue
            for name in names:
                assert name.split(".")[0] not in FORBIDDEN, f"{path.name} imports {name}"


def test_domain_never_reads_the_clock():
    for path in _modules():
        text = path.read_text()
        assert not any(call in text for call in CLOCK_READS), path.name


def test_domain_never_converts_to_float():
    for path in _modules():
        assert "float" + "(" not in path.read_text(), path.name
