"""Finding an account from one box (issue 33): what an account is found by, and how hits rank.

An account is found by its id, name, service or mailing address, owner or bill recipient,
parcel id and (once billing has kept a consumption naming it) meter id. Each value is
folded to lower-case letters and digits (accents dropped, punctuation and spaces gone), so
"PP-0001", "pp 0001" and "pp0001" are the same, and a hostile query (``%``, regex
characters, NUL) folds to letters and digits or to nothing: it never reaches a key
expression as anything but an ordinary string prefix.

Two kinds of term are indexed per account (``billing.adapters.search_index`` keeps them):

- the **whole value** folded (``"1 Lake Rd"`` -> ``"1lakerd"``): a query folded the same way
  is an **exact** hit when it equals an id's value, a **prefix** hit when it starts a value;
- each **word** of a value (``"lake"``, ``"rd"``): a query whose every word starts a word of
  the account (in any of its values) is a **token** hit.

Hits rank exact id first, then prefix, then token (``rank_hits``); within a rank by the
value matched, then account id, so paging through them is stable.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

ID_FIELDS = ("account_id", "parcel_id", "meter_id")
TEXT_FIELDS = (
    "name",
    "service_address",
    "mailing_address",
    "owner_name",
    "bill_recipient_name",
    "owner_address",
    "bill_recipient_address",
)
MAX_TERM = 120
"""A folded value or word is cut to this many characters: a sort key stays far below
DynamoDB's 1 KB, and no address needs more to be told apart."""
MAX_QUERY = 200
"""The longest query taken (the route refuses a longer one with 400)."""
MAX_WORDS = 6
"""Words of a query looked up (one index query each); the rest are ignored."""

EXACT, PREFIX, TOKEN = 0, 1, 2
RANK_NAMES = {EXACT: "exact", PREFIX: "prefix", TOKEN: "token"}

_NOT_WORD = re.compile(r"[^a-z0-9]+")


def _ascii_lower(text: str) -> str:
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(c for c in decomposed if not unicodedata.combining(c)).lower()


def words(text: str) -> list[str]:
    """The words of ``text``: runs of letters and digits, lower-case, accents dropped."""
    return [w[:MAX_TERM] for w in _NOT_WORD.split(_ascii_lower(text)) if w]


def folded(text: str) -> str:
    """``text`` as one term: its words run together (``"PP-0001"`` -> ``"pp0001"``)."""
    return "".join(words(text))[:MAX_TERM]


@dataclass(frozen=True, slots=True)
class Terms:
    """What one account is found by: each folded value with the fields holding it (and the
    value as written, shown beside a hit), and each word."""

    values: Mapping[str, tuple[tuple[str, ...], str]]
    words: frozenset[str]


def account_terms(fields: Mapping[str, str | None], meters: Iterable[str] = ()) -> Terms:
    """The terms of an account's searchable fields (``ID_FIELDS`` and ``TEXT_FIELDS`` by
    name; absent or blank ones skipped) and its meters."""
    pairs = [(name, fields.get(name)) for name in (*ID_FIELDS, *TEXT_FIELDS) if name != "meter_id"]
    pairs += [("meter_id", m) for m in meters]
    values: dict[str, tuple[list[str], str]] = {}
    found_words: set[str] = set()
    for name, value in pairs:
        if not value or not str(value).strip():
            continue
        term = folded(str(value))
        if not term:
            continue
        names, shown = values.setdefault(term, ([], str(value)))
        if name not in names:
            names.append(name)
        found_words.update(words(str(value)))
    return Terms(
        values={t: (tuple(sorted(n)), shown) for t, (n, shown) in values.items()},
        words=frozenset(found_words),
    )


@dataclass(frozen=True, slots=True)
class Query:
    """A query folded for the index: the whole (for exact and prefix hits) and its words."""

    whole: str
    words: tuple[str, ...]

    @property
    def empty(self) -> bool:
        return not self.whole


def parse_query(q: str) -> Query:
    """The query as the index looks it up (``MAX_WORDS`` distinct words, longest first: the
    longest word narrows the most)."""
    found = sorted(set(words(q[:MAX_QUERY])), key=lambda w: (-len(w), w))[:MAX_WORDS]
    return Query(whole=folded(q[:MAX_QUERY]), words=tuple(found))


@dataclass(frozen=True, slots=True)
class ValueHit:
    """An index entry whose folded value starts with the query."""

    account_id: str
    term: str
    fields: tuple[str, ...]
    shown: str


@dataclass(slots=True)
class Hit:
    account_id: str
    rank: int
    order: str  # the value matched (prefix) or the account id (exact, token): the tie-break
    matched: list[dict[str, str]] = field(default_factory=list)


def rank_hits(query: Query, values: Iterable[ValueHit], word_hits: Mapping[str, Iterable[str]]) -> list[Hit]:
    """Ranked hits: exact (an id's value equals the query) first, then prefix (a value starts
    with it), then token (each word of the query starts a word of the account: the
    accounts in every set of ``word_hits``, word -> accounts with a word it starts);
    each account once, at its best rank."""
    best: dict[str, Hit] = {}

    def offer(account_id: str, rank: int, order: str, matched: dict[str, str] | None) -> None:
        hit = best.get(account_id)
        if hit is None or (rank, order) < (hit.rank, hit.order):
            kept = hit.matched if hit else []
            best[account_id] = hit = Hit(account_id, rank, order, kept)
        if matched and matched not in hit.matched:
            hit.matched.append(matched)

    for v in values:
        exact = v.term == query.whole and any(f in ID_FIELDS for f in v.fields)
        for f in v.fields:
            offer(v.account_id, EXACT if exact else PREFIX, v.term, {"field": f, "value": v.shown})
    if query.words:
        sets = [set(word_hits.get(w, ())) for w in query.words]
        for account_id in sorted(set.intersection(*sets)):
            offer(account_id, TOKEN, account_id, None)
    return sorted(best.values(), key=lambda h: (h.rank, h.order, h.account_id))


def words_matched(fields: Mapping[str, str | None], query: Query) -> list[dict[str, str]]:
    """The fields of an account holding a word that a word of the query starts (what a
    token hit shows beside it)."""
    found = []
    for name in (*ID_FIELDS, *TEXT_FIELDS):
        value = fields.get(name)
        if value and any(w.startswith(q) for w in words(str(value)) for q in query.words):
            found.append({"field": name, "value": str(value)})
    return found
