"""`sewerbill table compare LIVE COPY`: repair a table in place from a restored copy.

The staff side of DEPLOY.md section 7: after `restore-table-to-point-in-time` (AWS) or an
`import-table` of an export (the local runtime), compare the live table with the copy and,
with `--write-back`, put back what the copy has and the live table lost. Changed items are
overwritten and newer items deleted only when asked (`--overwrite-changed`,
`--delete-newer`), because an item written since the restore point is usually later work
(a payment posted since), not damage. `--pk-prefix LEDGER#` narrows it to one kind of item.
"""

from __future__ import annotations

import json
from typing import Annotated, Any

import typer

from sewerbill import tablerepair

table_app = typer.Typer(no_args_is_help=True, help="DynamoDB tables: compare with a restored copy, repair.")


def register(app: typer.Typer) -> None:
    app.add_typer(table_app, name="table")


def _client(endpoint_url: str | None, region: str | None, local: bool) -> Any:
    import boto3

    if local:
        from sewerbill.cli.local import STATE_FILE

        try:
            endpoint_url = json.loads(STATE_FILE.read_text())["endpoint_url"]
        except (OSError, ValueError, KeyError):
            raise typer.BadParameter(
                f"--local: no running `sewerbill local up` found ({STATE_FILE})", param_hint="--local"
            ) from None
    kwargs: dict[str, Any] = {"region_name": region or "us-east-1"}
    if endpoint_url:
        kwargs["endpoint_url"] = endpoint_url
    if local:
        kwargs.update(aws_access_key_id="testing", aws_secret_access_key="testing")
    return boto3.client("dynamodb", **kwargs)


@table_app.command("compare")
def compare_command(
    live: Annotated[str, typer.Argument(help="The live table (the stack's, e.g. sewerbill-prod-billing).")],
    copy: Annotated[str, typer.Argument(help="The restored copy (a point-in-time restore or an import).")],
    write_back: Annotated[
        bool, typer.Option("--write-back", help="Put the copy's missing items back into the live table.")
    ] = False,
    overwrite_changed: Annotated[
        bool, typer.Option("--overwrite-changed", help="With --write-back: overwrite changed items too.")
    ] = False,
    delete_newer: Annotated[
        bool, typer.Option("--delete-newer", help="With --write-back: delete items the copy does not have.")
    ] = False,
    pk_prefix: Annotated[
        list[str] | None,
        typer.Option("--pk-prefix", help="Only items whose partition key starts so (repeatable)."),
    ] = None,
    show: Annotated[int, typer.Option(help="List up to this many keys of each kind.")] = 20,
    endpoint_url: Annotated[
        str | None, typer.Option("--endpoint-url", envvar="AWS_ENDPOINT_URL", help="DynamoDB endpoint.")
    ] = None,
    region: Annotated[str | None, typer.Option(envvar="AWS_REGION", help="AWS region.")] = None,
    local: Annotated[bool, typer.Option("--local", help="The running `sewerbill local up` stack.")] = False,
) -> None:
    """Compare LIVE with its restored COPY item by item; repair LIVE with --write-back."""
    if (overwrite_changed or delete_newer) and not write_back:
        raise typer.BadParameter("needs --write-back", param_hint="--overwrite-changed/--delete-newer")
    client = _client(endpoint_url, region, local)
    try:
        result = tablerepair.compare(client, live, copy, pk_prefix or ())
    except ValueError as error:
        raise typer.BadParameter(str(error), param_hint="COPY") from None
    except client.exceptions.ResourceNotFoundException as error:
        raise typer.BadParameter(str(error), param_hint="LIVE/COPY") from None
    counts = result.summary()
    typer.echo(
        f"{live} against {copy}: {counts['same']} same, {counts['missing']} missing, "
        f"{counts['changed']} changed, {counts['newer']} newer"
    )
    names = result.key_names
    for label, keys in (("missing", result.missing), ("changed", result.changed), ("newer", result.newer)):
        for key in list(keys)[:show]:
            typer.echo(f"  {label:<8} {tablerepair.describe_key(key, names)}")
        if len(keys) > show:
            typer.echo(f"  {label:<8} ... {len(keys) - show} more")
    if not write_back:
        if not result.equal:
            typer.echo("nothing written (--write-back repairs the live table)")
        return
    done = tablerepair.repair(client, result, overwrite_changed=overwrite_changed, delete_newer=delete_newer)
    typer.echo(f"written back {done.written}, overwritten {done.overwritten}, deleted {done.deleted}")
