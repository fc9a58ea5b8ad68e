"""The daily print batch costs one read on a day without letters, and is assembled once."""

from __future__ import annotations

import io
from datetime import date
from typing import Any

from notices.domain.print_batch import assemble_print_batch

DAY = date(2026, 3, 2)


class Mail:
    def __init__(self, letters: list[dict[str, Any]], exists: bool) -> None:
        self._letters, self.exists, self.asked, self.stored = letters, exists, [], []

    def letters(self, day: date) -> list[dict[str, Any]]:
        self.asked.append("letters")
        return list(self._letters)

    def batch_exists(self, day: date) -> bool:
        self.asked.append("batch_exists")
        return self.exists

    def pages(self, letters: Any) -> Any:
        return (letter["pages_key"].encode() for letter in letters)

    def store_batch(self, day: date, pdf: Any, manifest: str, count: int) -> tuple[str, str]:
        self.stored.append((manifest, count))
        return "batch.pdf", "manifest.csv"


def assemble(mail: Mail) -> Any:
    return assemble_print_batch(
        DAY,
        mail=mail,  # type: ignore[arg-type]
        merge=lambda pages: io.BytesIO(b"".join(pages)),
        manifest=lambda letters: ",".join(letter["notice_id"] for letter in letters),
    )


def test_a_day_without_letters_reads_its_letters_only() -> None:
    mail = Mail([], exists=False)
    assert assemble(mail) is None
    assert mail.asked == ["letters"]


def test_letters_are_batched_in_zip_order_once() -> None:
    letters = [
        {"notice_id": "n2", "zip": "53158", "pages_key": "b"},
        {"notice_id": "n1", "zip": "53024", "pages_key": "a"},
    ]
    batch = assemble(Mail(letters, exists=False))
    assert batch is not None and batch.letters == 2
    again = Mail(letters, exists=True)  # the batch of the day is there: not assembled again
    assert assemble(again) is None and again.stored == []
    fresh = Mail(letters, exists=False)
    assemble(fresh)
    assert fresh.stored == [("n1,n2", 2)]  # 53024 before 53158
