"""The daily print batch (RULES.md notices: mailed notices): one PDF for the day's letters
plus a CSV manifest with the address lines a print vendor needs, sorted by ZIP code.

Assembled once per day (idempotent by the day): a replayed schedule changes nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from datetime import date
from typing import Any, BinaryIO, Protocol


class Letters(Protocol):
    def letters(self, day: date) -> Iterator[dict[str, Any]]: ...

    def pages(self, letters: Iterable[dict[str, Any]]) -> Iterator[bytes]:
        """Each letter's PDF, in the order given (read from where the mail room keeps them)."""
        ...

    def batch_exists(self, day: date) -> bool: ...

    def store_batch(self, day: date, pdf: BinaryIO, manifest: str, count: int) -> tuple[str, str]: ...


@dataclass(frozen=True)
class PrintBatch:
    day: date
    letters: int
    pdf_key: str
    manifest_key: str


def assemble_print_batch(
    day: date,
    *,
    mail: Letters,
    merge: Callable[[Iterable[bytes]], BinaryIO],
    manifest: Callable[[list[dict[str, Any]]], str],
) -> PrintBatch | None:
    """Build the batch of ``day``; ``None`` when it exists already or there is no letter.

    ``merge`` reads the letters one at a time, in ZIP order, and returns the batch PDF as a
    file (spooled to disk when large), so a day of 10,000 letters is never held at once; the
    mail room hands them over from the objects it keeps them in, each object read once."""
    found = iter(mail.letters(day))
    first = next(found, None)
    if first is None:  # no letter: nothing to assemble, and no need to ask whether it was
        return None
    if mail.batch_exists(day):
        return None
    letters = sorted([first, *found], key=lambda letter: (letter.get("zip", ""), letter["notice_id"]))
    with merge(mail.pages(letters)) as pdf:
        pdf_key, manifest_key = mail.store_batch(day, pdf, manifest(letters), len(letters))
    return PrintBatch(day=day, letters=len(letters), pdf_key=pdf_key, manifest_key=manifest_key)
