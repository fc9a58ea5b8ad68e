"""Pure sampling domain: lab results, strength limits and strength categories.

No I/O, no clock, no boto3/powertools/os (STYLE 1). Modules:

- ``errors``: SamplingError hierarchy, each error naming its field.
- ``strength``: LabResult, StrengthLimits, exceedances, classify (PP-SEW-CAT-*, GR-*, SU-*).
- ``sullivan``: SU-BOD900 violation days and penalty, SU-INDUSTRIAL determination.
- ``parsing``: validation of untrusted JSON into domain objects for the CLI and API.
"""
