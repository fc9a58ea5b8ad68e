"""Reading the tariff files: `infra/tariffs/<tenant>/<effective-date>.yaml` into a `TariffBook`.

The file side of `common.tariffs` (YAML, paths, the directory layout), kept out of the
module the domains import: composition roots, the CLI and tests load a book here and hand
it to the domains. import-linter's pure-domains contract forbids this module (and so YAML)
in any domain, directly or through another module.

Errors name the file and the dotted field, e.g. `infra/tariffs/grafton-sewer/2025-01-01.yaml:
service_charge.value.5/8: rates must be decimal strings, got float 45.0`.
"""

from __future__ import annotations

from pathlib import Path

import yaml

from common.tariffs import Tariff, TariffBook, TariffError, parse_tariff

# PyYAML's safe loader on libyaml (its wheels ship it): the same documents, a sixth of the
# time (a function's cold start loads the whole book: 61 -> 9 ms); the pure-Python one without.
_SAFE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def load_tariff_book(directory: str | Path) -> TariffBook:
    """Every version under `directory`, validated; a tenant's versions must be contiguous."""
    root = Path(directory)
    if not root.is_dir():
        raise TariffError(f"tariff directory not found: {root}")
    versions: dict[str, list[Tariff]] = {}
    files: dict[str, list[str]] = {}
    for path in sorted(root.glob("*/*.yaml")):
        shown = str(path)
        try:
            raw = yaml.load(path.read_text(encoding="utf-8"), Loader=_SAFE_LOADER)  # noqa: S506 - a safe loader
        except yaml.YAMLError as exc:
            raise TariffError(f"not valid YAML: {exc}", file=shown) from None
        tariff = parse_tariff(raw, file=shown)
        if tariff.status == "proposed":
            raise TariffError(
                "this version is proposed, not adopted: the production tariff loader refuses to "
                "bill on it (adopt it by resolution and set status: adopted; preview it with "
                "`sewerbill preview --proposed FILE`)",
                file=shown,
                field="status",
            )
        if tariff.tenant != path.parent.name:
            raise TariffError(
                f"tenant {tariff.tenant!r} does not match its folder {path.parent.name!r}",
                file=shown,
                field="tenant",
            )
        if path.stem != tariff.effective_from.isoformat():
            raise TariffError(
                f"file name must be the effective date {tariff.effective_from.isoformat()}",
                file=shown,
                field="effective_from",
            )
        versions.setdefault(tariff.tenant, []).append(tariff)
        files.setdefault(tariff.tenant, []).append(shown)
    for tenant, tariffs in versions.items():
        order = sorted(zip(tariffs, files[tenant], strict=True), key=lambda p: p[0].effective_from)
        for (prev, prev_file), (nxt, _) in zip(order, order[1:], strict=False):
            if prev.effective_until != nxt.effective_from:
                found = prev.effective_until.isoformat() if prev.effective_until else "open-ended"
                raise TariffError(
                    f"versions must be contiguous: this version ends {found} but the next "
                    f"version starts {nxt.effective_from.isoformat()}",
                    file=prev_file,
                    field="effective_until",
                )
        last, last_file = order[-1]
        if last.effective_until is not None:
            raise TariffError(
                "the newest version must be open-ended (no effective_until)",
                file=last_file,
                field="effective_until",
            )
    return TariffBook(versions)


def load_proposed_tariff(path: str | Path) -> Tariff:
    """One proposed version (a rate study's draft file), validated; refused unless it is
    marked ``status: proposed`` (an adopted version belongs in the tariff directory)."""
    shown = str(path)
    try:
        raw = yaml.load(Path(path).read_text(encoding="utf-8"), Loader=_SAFE_LOADER)  # noqa: S506 - a safe loader
    except OSError as exc:
        raise TariffError(f"cannot read the proposed tariff: {exc}", file=shown) from None
    except yaml.YAMLError as exc:
        raise TariffError(f"not valid YAML: {exc}", file=shown) from None
    tariff = parse_tariff(raw, file=shown)
    if tariff.status != "proposed":
        raise TariffError("is not marked proposed (status: proposed)", file=shown, field="status")
    return tariff


def default_tariffs_dir() -> Path:
    """The tariffs shipped in the repository (used by the CLI and the local runtime)."""
    return Path(__file__).resolve().parents[2] / "infra" / "tariffs"
