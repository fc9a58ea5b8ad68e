"""DynamoDB ImportTable on the local runtime reads an export's lines as JSON.

Restoring a table on the local runtime is an export to S3 (`ExportTableToPointInTime`)
then an `ImportTable` of it into a new table (DEPLOY.md section 7), as AWS does for a
restore from an export. moto 5.2.5 parses the export's lines with py_partiql_parser's
`JsonParser`, which cuts a string at its first quote character: an item whose text holds
`O'Brien` or `"` comes back changed, so a repair from that copy would write damage back.
The export format is one DynamoDB JSON object per line (AWS's "DYNAMODB_JSON"), so each
line is read with `json.loads`, and the byte count is that of the lines, as AWS reports it.
Reported upstream: docs/upstream/moto-import-table-json-lines.md. Installed and removed
with the rest of the shim (`motoshim.install`/`uninstall`).
"""

from __future__ import annotations

import json
from typing import Any

from moto.core.utils import gzip_decompress
from moto.dynamodb.models.table_import import TableImport

_original: dict[str, Any] = {}


def _process_s3_files(self: TableImport, s3_backend: Any, bucket: Any) -> None:
    from moto.dynamodb.models import dynamodb_backends

    dynamo = dynamodb_backends[self.account_id][self.region_name]
    self.table = dynamo.create_table(
        name=self.table_name,
        billing_mode=self.billing_mode,
        throughput=self.throughput,
        schema=self.key_schema,
        global_indexes=self.global_indexes,
        indexes=None,
        attr=self.attrs,
        sse_specification=None,
        streams=None,
        tags=[],
        deletion_protection_enabled=False,
        warm_throughput=None,
    )
    keys, _, _, _ = s3_backend.list_objects(
        bucket, prefix=self.s3_source.get("S3KeyPrefix"), delimiter=None, marker=None, max_keys=None
    )
    for key in keys:
        raw = gzip_decompress(key.value) if self.compression_type == "GZIP" else key.value
        for line in raw.decode("utf-8").splitlines():
            if not line.strip():
                continue
            self.processed_count += 1
            self.processed_bytes += len(line.encode("utf-8"))
            try:
                self.table.put_item(item_attrs=json.loads(line)["Item"])
                self.imported_count += 1
            except Exception as error:  # noqa: BLE001 - counted as the import's errors, as AWS does
                self.failure_message = str(error)
                self.error_count += 1
    self.status = "COMPLETED" if self.error_count == 0 else "FAILED"


def install() -> None:
    if not _original:
        _original["process"] = TableImport.__dict__["_process_s3_files"]
        TableImport._process_s3_files = _process_s3_files  # type: ignore[method-assign]


def uninstall() -> None:
    if _original:
        TableImport._process_s3_files = _original.pop("process")  # type: ignore[method-assign]
