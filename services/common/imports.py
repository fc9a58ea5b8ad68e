"""One set of counters for every import kind (issues 26 and 27).

Every data line of an uploaded file ends in exactly one of four counts:

- ``accepted``: taken in as new (a new read, payment, interval, lab result; a new record);
- ``repeated``: identical to a line already taken in, in this file or an earlier one;
  nothing changes;
- ``changed``: a record (account, meter, parcel) whose line differs from the version
  held; kept as a new version, the old one as history (CONTRACTS.md). Facts are never
  ``changed``: a fact that conflicts with one taken in is ``rejected`` with both values;
- ``rejected``: refused, with the line, the column and the cause in the file's report.

``waiting`` counts lines held in suspense (an account not known
yet) and is counted apart: such a line is neither lost nor taken in until its account
arrives, so it is its own fifth count and the five add up to ``lines``.

The counts of a file redelivered after a crash are those a run without the crash would
have reported: a reader derives them from what is stored (a line stored by the crashed
delivery is ``accepted`` when this file stored it, ``repeated`` only when an earlier file
did), never from what this delivery happened to write first.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class ImportCounts:
    """How a file's data lines ended; :meth:`check` proves they add up to ``lines``."""

    lines: int = 0
    accepted: int = 0
    repeated: int = 0
    changed: int = 0
    rejected: int = 0
    waiting: int = 0

    def check(self) -> ImportCounts:
        total = self.accepted + self.repeated + self.changed + self.rejected + self.waiting
        if total != self.lines:
            raise AssertionError(
                f"import counts do not add up: {self.as_dict()} sum to {total}, not {self.lines} lines"
            )
        return self

    def as_dict(self) -> dict[str, int]:
        return {
            "lines": self.lines,
            "accepted": self.accepted,
            "repeated": self.repeated,
            "changed": self.changed,
            "rejected": self.rejected,
            "waiting": self.waiting,
        }

    @property
    def duplicate_file(self) -> bool:
        """Every line was taken in before: the file, sent again, changes nothing.

        A file whose rejections could turn out differently later (a read dated in the
        future, an account not known yet) is not a duplicate: it is read again.
        """
        return self.lines > 0 and self.repeated == self.lines
