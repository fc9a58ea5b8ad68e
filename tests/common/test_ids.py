"""common.ids: derived identifiers are the standard library's, text for text."""

from __future__ import annotations

import uuid

from hypothesis import given
from hypothesis import strategies as st

from common.ids import name_based_id

METERING = uuid.UUID("6f0c3d52-5b0e-4c6e-9a43-0d8f1c2b7e11")


@given(
    namespace=st.sampled_from([METERING, uuid.NAMESPACE_URL, uuid.NAMESPACE_DNS, uuid.UUID(int=0)]),
    name=st.text(),
)
def test_a_name_based_id_is_uuid5_s_text(namespace: uuid.UUID, name: str) -> None:
    assert name_based_id(namespace, name) == str(uuid.uuid5(namespace, name))


def test_a_read_file_s_event_id_is_the_one_earlier_stops_published() -> None:
    """A retry of a file taken in before this change must write the same event ids (the
    stream then sees a MODIFY and publishes nothing twice)."""
    name = "etag-3348f77b239c0b9fb0350b1dba46466d#pleasant-prairie-sewer#W-A0#2026-02-01#2026-03-01"
    made = name_based_id(METERING, name)
    assert made == str(uuid.uuid5(METERING, name))
    assert uuid.UUID(made).version == 5 and uuid.UUID(made).variant == uuid.RFC_4122
