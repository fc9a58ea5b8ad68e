"""Pure stormwater domain: ERUs by the TR-55 curve number method (PP-CWU-*).

No I/O, no clock, no AWS: adapters and handlers sit beside and above this package.
"""

from stormwater.domain.errors import InvalidHydrology, InvalidParcel, InvalidSettings, StormwaterError
from stormwater.domain.eru import (
    PLEASANT_PRAIRIE_DEFAULTS,
    EruDetermination,
    Hydrology,
    Parcel,
    ParcelUse,
    StormwaterSettings,
    counted_impervious_sqft,
    determine_eru,
)
from stormwater.domain.tr55 import composite_cn, runoff_depth_in, runoff_volume_cuft

__all__ = [
    "PLEASANT_PRAIRIE_DEFAULTS",
    "EruDetermination",
    "Hydrology",
    "InvalidHydrology",
    "InvalidParcel",
    "InvalidSettings",
    "Parcel",
    "ParcelUse",
    "StormwaterError",
    "StormwaterSettings",
    "composite_cn",
    "counted_impervious_sqft",
    "determine_eru",
    "runoff_depth_in",
    "runoff_volume_cuft",
]
