"""CloudFormation custom resource: writes the portal's ``config.json`` to its bucket on
Create and Update (``webportal.site_config``). Delete leaves it: the bucket is retained.
Every outcome is reported to CloudFormation, a failure with its reason, so a bad property
fails the deploy instead of hanging it."""

from __future__ import annotations

from typing import Any

from common.errors import FieldError
from common.observability import logger, observed
from webportal import composition
from webportal.site_config import KEY, document, properties


@observed
def lambda_handler(event: dict[str, Any], context: Any) -> None:
    physical_id = str(event.get("PhysicalResourceId") or f"portal-site-config-{event.get('RequestId', '')}")
    try:
        if event.get("RequestType") in ("Create", "Update"):
            props = properties(event.get("ResourceProperties") or {})
            physical_id = f"s3://{props.bucket}/{KEY}"
            composition.s3().put_object(
                Bucket=props.bucket,
                Key=KEY,
                Body=document(props),
                ContentType="application/json",
                CacheControl="no-cache",
            )
    except (FieldError, composition.ClientError) as exc:
        logger.exception("portal config.json not written")
        composition.reply_to_cloudformation(event, succeeded=False, physical_id=physical_id, reason=str(exc))
        return
    composition.reply_to_cloudformation(event, succeeded=True, physical_id=physical_id)
