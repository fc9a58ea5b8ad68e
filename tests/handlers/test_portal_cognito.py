"""Cognito sign-in (issue 14): the pre-token-generation trigger gives hosted-UI tokens the
claims CONTRACTS.md names, so the services' one access check (``common.authz.require``)
admits a Cognito user exactly where it admits a locally signed token; and the custom
resource writes the pages' config.json to the portal bucket at deploy."""

from __future__ import annotations

import json
from typing import Any
from unittest import mock

import boto3
import pytest
from handler_support import lambda_context

from common.authz import require
from common.http import ApiError
from webportal.claims import contract_claims
from webportal.handlers import pre_token_generation, write_site_config

PP = "pleasant-prairie-sewer"
GRAFTON = "grafton-sewer"


def pre_token_event(groups: list[str], attributes: dict[str, str]) -> dict[str, Any]:
    """What Cognito sends a V1 pre-token-generation trigger when the hosted UI signs a user in."""
    return {
        "version": "1",
        "triggerSource": "TokenGeneration_HostedAuth",
        "region": "us-east-1",
        "userPoolId": "us-east-1_portal",
        "userName": "u-1",
        "callerContext": {"awsSdkVersion": "aws-sdk-unknown-unknown", "clientId": "client-1"},
        "request": {
            "userAttributes": {"sub": "u-1", "email": "pat@example.com", **attributes},
            "groupConfiguration": {
                "groupsToOverride": groups,
                "iamRolesToOverride": [],
                "preferredRole": None,
            },
        },
        "response": {"claimsOverrideDetails": None},
    }


def cognito_id_token_claims(groups: list[str], attributes: dict[str, str]) -> dict[str, Any]:
    """The ID token Cognito issues after the trigger ran: its own claims plus the added ones."""
    answered = pre_token_generation.lambda_handler(pre_token_event(groups, attributes), lambda_context())
    added = answered["response"]["claimsOverrideDetails"]["claimsToAddOrOverride"]
    return {
        "sub": "u-1",
        "iss": "https://cognito-idp.us-east-1.amazonaws.com/us-east-1_portal",
        "aud": "client-1",
        "token_use": "id",
        "cognito:groups": groups,
        **attributes,
        **added,
    }


def through_http_api(claims: dict[str, Any]) -> dict[str, Any]:
    """The request a function gets: API Gateway's JWT authorizer hands every claim over as a
    string, a list as "[a b]"."""
    flat = {k: "[" + " ".join(v) + "]" if isinstance(v, list) else str(v) for k, v in claims.items()}
    return {"requestContext": {"authorizer": {"jwt": {"claims": flat}}}}


# --- the mapping, as rules ---------------------------------------------------------------------
def test_a_customer_gets_its_role_tenants_and_accounts_from_its_group_and_attributes() -> None:
    claims = contract_claims(
        ["customer"], {"custom:tenants": PP, "custom:accounts": "PP-1001, PP-1002", "custom:parcels": "P-9"}
    )
    assert claims == {"role": "customer", "tenants": PP, "accounts": "PP-1001 PP-1002", "parcels": "P-9"}


def test_an_owner_token_carries_parcels_but_never_accounts() -> None:
    claims = contract_claims(
        ["owner"], {"custom:tenants": PP, "custom:accounts": "PP-1001", "custom:parcels": "P-9 P-10"}
    )
    assert claims == {"role": "owner", "tenants": PP, "accounts": "", "parcels": "P-9 P-10"}


def test_staff_carry_their_tenants_and_no_account_or_parcel_lists() -> None:
    claims = contract_claims(["staff"], {"custom:tenants": f"{PP} {GRAFTON}", "custom:accounts": "PP-1001"})
    assert claims == {"role": "staff", "tenants": f"{PP} {GRAFTON}", "accounts": "", "parcels": ""}


@pytest.mark.parametrize("groups", [[], ["admins"], ["staff", "customer"]])
def test_no_role_group_or_two_role_groups_give_no_role_and_no_tenants(groups: list[str]) -> None:
    claims = contract_claims(groups, {"custom:tenants": PP, "custom:accounts": "PP-1001"})
    assert claims == {"role": "", "tenants": "", "accounts": "", "parcels": ""}


def test_the_trigger_answers_with_string_claims_as_cognitos_v1_trigger_requires() -> None:
    answered = pre_token_generation.lambda_handler(
        pre_token_event(["customer"], {"custom:tenants": PP, "custom:accounts": "PP-1001"}), lambda_context()
    )
    added = answered["response"]["claimsOverrideDetails"]["claimsToAddOrOverride"]
    assert set(added) == {"role", "tenants", "accounts", "parcels"}
    assert all(isinstance(v, str) for v in added.values())
    assert answered["userName"] == "u-1"  # the event goes back whole, as Cognito expects


# --- a mapped Cognito token through the services' access check ----------------------------------
def test_a_mapped_customer_token_reaches_its_own_account_and_not_another() -> None:
    event = through_http_api(
        cognito_id_token_claims(["customer"], {"custom:tenants": PP, "custom:accounts": "PP-1001 PP-1002"})
    )
    roles = ("customer", "staff")
    assert require(event, PP, roles=roles, account_id="PP-1002").accounts == ("PP-1001", "PP-1002")
    with pytest.raises(ApiError) as refused:
        require(event, PP, roles=roles, account_id="PP-2001")
    assert refused.value.status == 403
    with pytest.raises(ApiError):  # the same account id under another tenant
        require(event, GRAFTON, roles=roles, account_id="PP-1001")


def test_a_mapped_owner_token_reaches_its_parcel_only() -> None:
    event = through_http_api(
        cognito_id_token_claims(["owner"], {"custom:tenants": PP, "custom:parcels": "P-9"})
    )
    assert require(event, PP, roles=("owner",), parcel_id="P-9").role == "owner"
    with pytest.raises(ApiError):
        require(event, PP, roles=("owner",), parcel_id="P-10")


def test_a_mapped_staff_token_acts_for_its_tenant_and_not_another() -> None:
    event = through_http_api(cognito_id_token_claims(["staff"], {"custom:tenants": GRAFTON}))
    assert require(event, GRAFTON).role == "staff"
    with pytest.raises(ApiError):
        require(event, PP)


def test_without_the_trigger_a_cognito_token_is_refused_everywhere() -> None:
    # Why the trigger exists: the groups and custom attributes alone name no role the services know.
    raw = {"sub": "u-1", "cognito:groups": ["customer"], "custom:tenants": PP, "custom:accounts": "PP-1001"}
    with pytest.raises(ApiError):
        require(through_http_api(raw), PP, roles=("customer",), account_id="PP-1001")


# --- config.json at deploy --------------------------------------------------------------------
BUCKET = "sewerbill-prod-portal-123456789012-us-east-1"


def custom_resource_event(request_type: str, **props: str) -> dict[str, Any]:
    return {
        "RequestType": request_type,
        "ResponseURL": "https://cloudformation-custom-resource-response.example/abc",
        "StackId": "arn:aws:cloudformation:us-east-1:123456789012:stack/sewerbill/1",
        "RequestId": "req-1",
        "LogicalResourceId": "PortalSiteConfig",
        "ResourceType": "Custom::PortalSiteConfig",
        "ResourceProperties": {
            "ServiceToken": "arn:aws:lambda:us-east-1:123456789012:function:f",
            "Bucket": BUCKET,
            "ApiUrl": "https://abc123.execute-api.us-east-1.amazonaws.com",
            "SignInUrl": "https://sewerbill-portal-prod.auth.us-east-1.amazoncognito.com",
            "ClientId": "client-1",
            "RedirectUri": "https://d111.cloudfront.net/",
            **props,
        },
    }


@pytest.fixture
def portal_bucket(aws: None, monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.setenv("EVENT_BUS_NAME", "sewerbill-test")
    s3 = boto3.client("s3")
    s3.create_bucket(Bucket=BUCKET)
    return s3


def run_custom_resource(event: dict[str, Any]) -> dict[str, Any]:
    """Invoke the handler; return what it PUT to CloudFormation's ResponseURL."""
    with mock.patch("urllib.request.urlopen") as urlopen:
        write_site_config.lambda_handler(event, lambda_context())
    (request,), _ = urlopen.call_args
    assert request.get_method() == "PUT" and request.full_url == event["ResponseURL"]
    return dict(json.loads(request.data))


def test_create_writes_the_pages_config_and_reports_success(portal_bucket: Any) -> None:
    reply = run_custom_resource(custom_resource_event("Create"))
    assert reply["Status"] == "SUCCESS"
    assert reply["PhysicalResourceId"] == f"s3://{BUCKET}/config.json"
    assert (reply["RequestId"], reply["LogicalResourceId"]) == ("req-1", "PortalSiteConfig")
    written = portal_bucket.get_object(Bucket=BUCKET, Key="config.json")
    assert written["ContentType"] == "application/json"
    assert json.loads(written["Body"].read()) == {
        "api_url": "https://abc123.execute-api.us-east-1.amazonaws.com",
        "sign_in_url": "https://sewerbill-portal-prod.auth.us-east-1.amazoncognito.com",
        "client_id": "client-1",
        "redirect_uri": "https://d111.cloudfront.net/",
        "default_cycle": "",
    }


def test_an_update_rewrites_it_with_the_new_values(portal_bucket: Any) -> None:
    run_custom_resource(custom_resource_event("Create"))
    run_custom_resource(custom_resource_event("Update", ClientId="client-2"))
    body = json.loads(portal_bucket.get_object(Bucket=BUCKET, Key="config.json")["Body"].read())
    assert body["client_id"] == "client-2"


def test_a_bad_property_fails_the_deploy_naming_it_instead_of_hanging_it(portal_bucket: Any) -> None:
    reply = run_custom_resource(custom_resource_event("Create", ApiUrl="not a url"))
    assert reply["Status"] == "FAILED"
    assert reply["Reason"].startswith("ApiUrl:")
    assert "Contents" not in portal_bucket.list_objects_v2(Bucket=BUCKET)


def test_delete_leaves_the_retained_bucket_alone_and_reports_success(portal_bucket: Any) -> None:
    run_custom_resource(custom_resource_event("Create"))
    event = custom_resource_event("Delete") | {"PhysicalResourceId": f"s3://{BUCKET}/config.json"}
    reply = run_custom_resource(event)
    assert reply["Status"] == "SUCCESS"
    assert reply["PhysicalResourceId"] == f"s3://{BUCKET}/config.json"
