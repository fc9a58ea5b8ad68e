"""The account search index (issue 33): items written with each account version, read by key
prefix, so a search never scans the accounts.

Layout, one partition per tenant (``SEARCH#<tenant>``), two kinds of sort key:

- ``V#<folded value>#<account_id>``: a whole value of the account folded
  (``billing.domain.search.folded``), with ``fields`` (which of its fields hold it) and
  ``shown`` (the value as written). A query folded the same way is one ``begins_with``
  query on ``V#<query>``: the values it starts (prefix hits) including the ids it equals
  (exact hits, ``V#<query>#``).
- ``W#<word>#<account_id>``: one item per word of the account's values; a query's word is one
  ``begins_with`` query on ``W#<word>`` (token hits: accounts with every word of the query).

Why this scales: a search costs one Query for the whole and one per word (at most
``MAX_WORDS``), each reading only the index items whose term starts with what was typed,
in key order, at most ``MAX_READ`` items each (a query matching more says ``truncated``:
type more). It never reads the ``ACCOUNTS#`` partition, whose size is the utility's; only
the page's hits are then read whole (one BatchGetItem). Writing costs about ten small items
per account version (only the changed ones are put, the stale ones deleted), written with
the version in ``BillingRepo.store_accounts``; a meter id is added when billing first keeps
a consumption naming it (``meter_items``, ``Projections.keep_consumptions``).

Terms are folded to ``[a-z0-9]`` (cut to ``MAX_TERM``), so ``#`` never appears in one and a
key never exceeds DynamoDB's 1 KB sort key.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from billing.domain.accounts import AccountRecord
from billing.domain.search import ValueHit, account_terms
from common.dynamo import from_item

MAX_READ = 500
"""Index items read per term looked up; beyond it the answer is ``truncated``."""


def search_pk(tenant: str) -> str:
    return f"SEARCH#{tenant}"


def _fields(record: AccountRecord) -> dict[str, str | None]:
    values = record.to_values()
    return {k: (None if v is None else str(v)) for k, v in values.items()}


def index_items(record: AccountRecord, meters: Iterable[str] = ()) -> dict[tuple[str, str], dict[str, Any]]:
    """The index items of one account version (and its meters), by key."""
    terms = account_terms(_fields(record), meters)
    pk = search_pk(record.tenant)
    items: dict[tuple[str, str], dict[str, Any]] = {}
    for term, (names, shown) in terms.values.items():
        sk = f"V#{term}#{record.account_id}"
        items[(pk, sk)] = {
            "pk": pk,
            "sk": sk,
            "account_id": record.account_id,
            "term": term,
            "fields": list(names),
            "shown": shown[:200],
        }
    for word in terms.words:
        sk = f"W#{word}#{record.account_id}"
        items[(pk, sk)] = {"pk": pk, "sk": sk, "account_id": record.account_id}
    return items


def index_changes(
    old: AccountRecord | None, new: AccountRecord
) -> tuple[list[dict[str, Any]], list[tuple[str, str]]]:
    """What a new account version changes in the index: the items to put (new or changed)
    and the keys to delete (terms the old version had and the new one has not). Meter items
    are kept apart (``meter_items``): an account version never removes them."""
    now = index_items(new)
    before = index_items(old) if old is not None else {}
    puts = [item for key, item in now.items() if before.get(key) != item]
    deletes = [key for key in before if key not in now]
    return puts, deletes


def meter_items(tenant: str, account_id: str, meters: Iterable[str]) -> dict[tuple[str, str], dict[str, Any]]:
    """The index items naming ``meters`` as the account's (a value item, field ``meter_id``,
    and its words)."""
    pk = search_pk(tenant)
    items: dict[tuple[str, str], dict[str, Any]] = {}
    terms = account_terms({}, meters)
    for term, (_, shown) in terms.values.items():
        sk = f"V#{term}#{account_id}#meter"
        items[(pk, sk)] = {
            "pk": pk,
            "sk": sk,
            "account_id": account_id,
            "term": term,
            "fields": ["meter_id"],
            "shown": shown[:200],
        }
    for word in terms.words:
        sk = f"W#{word}#{account_id}#meter"
        items[(pk, sk)] = {"pk": pk, "sk": sk, "account_id": account_id}
    return items


class SearchIndex:
    """Reads of the index through an injected low-level DynamoDB client."""

    def __init__(self, client: Any, table: str) -> None:
        self.client = client
        self.table = table
        self.requests = 0

    def _prefixed(self, tenant: str, prefix: str) -> tuple[list[dict[str, Any]], bool]:
        kwargs: dict[str, Any] = {
            "TableName": self.table,
            "KeyConditionExpression": "pk = :pk AND begins_with(sk, :p)",
            "ExpressionAttributeValues": {":pk": {"S": search_pk(tenant)}, ":p": {"S": prefix}},
            "Limit": MAX_READ + 1,
        }
        found: list[dict[str, Any]] = []
        while True:
            self.requests += 1
            resp = self.client.query(**kwargs)
            found.extend(from_item(i) for i in resp.get("Items", []))
            last = resp.get("LastEvaluatedKey")
            if len(found) > MAX_READ:
                return found[:MAX_READ], True
            if not last:
                return found, False
            kwargs["ExclusiveStartKey"] = last
            kwargs["Limit"] = MAX_READ + 1 - len(found)

    def values_starting(self, tenant: str, whole: str) -> tuple[list[ValueHit], bool]:
        items, truncated = self._prefixed(tenant, f"V#{whole}")
        hits = [
            ValueHit(
                account_id=str(i["account_id"]),
                term=str(i["term"]),
                fields=tuple(i.get("fields") or ()),
                shown=str(i.get("shown") or ""),
            )
            for i in items
        ]
        return hits, truncated

    def accounts_with_word(self, tenant: str, word: str) -> tuple[set[str], bool]:
        items, truncated = self._prefixed(tenant, f"W#{word}")
        return {str(i["account_id"]) for i in items}, truncated

    def words(self, tenant: str, words: Iterable[str]) -> tuple[Mapping[str, set[str]], bool]:
        out: dict[str, set[str]] = {}
        truncated = False
        for w in words:
            out[w], cut = self.accounts_with_word(tenant, w)
            truncated = truncated or cut
        return out, truncated
