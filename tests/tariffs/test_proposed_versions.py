"""A rate study's draft is a proposed version (issue 35): the production tariff loader refuses
to bill on it; a preview can put it in a book of its own."""

from __future__ import annotations

import shutil
from datetime import date
from decimal import Decimal
from pathlib import Path

import pytest
import yaml

from billing.domain.rating import Account, RatingEngine, RatingInput
from common.tariff_files import default_tariffs_dir, load_proposed_tariff, load_tariff_book
from common.tariffs import GraftonTariff, TariffError
from sewerbill.cli.rates import tariff_yaml

SHIPPED = default_tariffs_dir()
GRAFTON = "grafton-sewer"


@pytest.fixture
def draft(tmp_path: Path) -> Path:
    """Grafton's version in force as a proposed 2026 version (volume 7.15), written as the
    rate study writes it."""
    book = load_tariff_book(SHIPPED)
    current = book.versions(GRAFTON)[-1]
    assert isinstance(current, GraftonTariff)
    proposed = current.model_copy(
        update={
            "effective_from": date(2026, 1, 1),
            "status": "proposed",
            "volume_rate_per_kgal": current.volume_rate_per_kgal.model_copy(
                update={"value": Decimal("7.15")}
            ),
        }
    )
    path = tmp_path / "draft" / GRAFTON / "2026-01-01.yaml"
    path.parent.mkdir(parents=True)
    path.write_text(tariff_yaml(proposed), encoding="utf-8")
    return path


def test_the_production_loader_refuses_a_proposed_version_naming_file_and_field(
    tmp_path: Path, draft: Path
) -> None:
    tariffs = tmp_path / "tariffs"
    shutil.copytree(SHIPPED, tariffs)
    # even adopted in every other respect (the version before it closed), it is refused
    old = tariffs / GRAFTON / "2025-01-01.yaml"
    doc = yaml.safe_load(old.read_text(encoding="utf-8"))
    doc["effective_until"] = "2026-01-01"
    old.write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
    shutil.copy(draft, tariffs / GRAFTON / "2026-01-01.yaml")
    with pytest.raises(TariffError) as caught:
        load_tariff_book(tariffs)
    assert caught.value.field == "status"
    assert caught.value.file is not None and caught.value.file.endswith("grafton-sewer/2026-01-01.yaml")
    assert "proposed" in str(caught.value)
    # adopted by resolution (status: adopted), the same file loads and bills
    doc = yaml.safe_load((tariffs / GRAFTON / "2026-01-01.yaml").read_text(encoding="utf-8"))
    doc["status"] = "adopted"
    (tariffs / GRAFTON / "2026-01-01.yaml").write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
    assert (
        load_tariff_book(tariffs).in_force(GRAFTON, date(2026, 2, 1)).version_id == "grafton-sewer@2026-01-01"
    )


def test_a_shipped_version_is_adopted() -> None:
    assert {t.status for t in load_tariff_book(SHIPPED)} == {"adopted"}


def test_the_draft_file_round_trips_and_previews_on_a_book_of_its_own(draft: Path) -> None:
    proposed = load_proposed_tariff(draft)
    assert proposed.status == "proposed"
    assert isinstance(proposed, GraftonTariff) and proposed.volume_rate_per_kgal.value == Decimal("7.15")
    book = load_tariff_book(SHIPPED).with_proposed(proposed)
    before = book.in_force(GRAFTON, date(2025, 12, 31))
    assert before.version_id == "grafton-sewer@2025-01-01"
    assert before.effective_until == date(2026, 1, 1)
    assert book.in_force(GRAFTON, date(2026, 1, 1)) is not None
    bill = RatingEngine(book).rate(
        RatingInput(
            GRAFTON,
            date(2026, 1, 1),
            date(2026, 4, 1),
            account=Account("residential", meter_size="5/8"),
            water_gallons=Decimal(10000),
        )
    )
    assert bill.tariff_versions == ("grafton-sewer@2026-01-01",)
    volume = next(bl for bl in bill.lines if bl.rule_id == "GR-VOL")
    assert volume.rate == Decimal("7.15") and volume.amount == Decimal("71.50")


def test_an_adopted_file_is_not_a_proposed_one(tmp_path: Path) -> None:
    with pytest.raises(TariffError) as caught:
        load_proposed_tariff(SHIPPED / GRAFTON / "2025-01-01.yaml")
    assert caught.value.field == "status"


def test_a_proposed_version_must_come_after_the_newest(draft: Path) -> None:
    proposed = load_proposed_tariff(draft).model_copy(update={"effective_from": date(2024, 1, 1)})
    with pytest.raises(TariffError) as caught:
        load_tariff_book(SHIPPED).with_proposed(proposed)
    assert caught.value.field == "effective_from"
