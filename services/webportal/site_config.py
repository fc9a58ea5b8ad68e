"""The portal's ``config.json``: where the static pages find the API and the hosted UI.

Written to the portal bucket at deploy by a CloudFormation custom resource
(``webportal.handlers.write_site_config``) from the stack's own values, so nobody copies
outputs by hand. The pages read it at start (``portal/portal.js``): ``api_url`` prefixes
every API call, ``sign_in_url`` is the hosted UI's base URL (``/oauth2/authorize`` and
``/oauth2/token`` are under it), ``client_id`` and ``redirect_uri`` are the app client's.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, HttpUrl, ValidationError

from common.errors import FieldError

KEY = "config.json"


class SiteConfigProperties(BaseModel):
    """The custom resource's properties (template.yaml ``PortalSiteConfig``)."""

    model_config = ConfigDict(extra="ignore", populate_by_name=True)

    bucket: str = Field(alias="Bucket", min_length=3, max_length=63)
    api_url: HttpUrl = Field(alias="ApiUrl")
    sign_in_url: HttpUrl = Field(alias="SignInUrl")
    client_id: str = Field(alias="ClientId", min_length=1, max_length=128)
    redirect_uri: HttpUrl = Field(alias="RedirectUri")
    default_cycle: str = Field(default="", alias="DefaultCycle", max_length=10)


def properties(raw: dict[str, Any]) -> SiteConfigProperties:
    try:
        return SiteConfigProperties.model_validate(raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        raise FieldError(".".join(str(p) for p in first["loc"]), first["msg"]) from None


def document(props: SiteConfigProperties) -> bytes:
    """The JSON the pages read (no trailing slash on URLs: the pages append paths)."""
    body = {
        "api_url": str(props.api_url).rstrip("/"),
        "sign_in_url": str(props.sign_in_url).rstrip("/"),
        "client_id": props.client_id,
        "redirect_uri": str(props.redirect_uri),
        "default_cycle": props.default_cycle,
    }
    return json.dumps(body, indent=2).encode()
