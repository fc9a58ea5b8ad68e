"""botocore's data files read once, in the forkserver, for every function's process.

A function's first boto3 clients read and parse botocore's JSON data (the endpoints and
partitions, each service's model and endpoint rules): 150-220 ms of CPU for a worker's
first three clients, in each of the seven workers of a year of schedules, the same files
each time. The forkserver imports this module (`invoker.PRELOAD`): it makes one botocore
`Loader` and has it read what creating a client of each service in `SERVICES` reads. In
every worker forked afterwards, each botocore session whose data path is botocore's default
(no ``AWS_DATA_PATH``) gets a loader of its own, as before, whose cache is that loader's:
what botocore's `instance_cache` keeps of each read (a model with its extras merged, once),
the same for every loader on the default paths. The sessions of a process then share their
reads as the clients of one session always do, while each keeps its own search paths (boto3
adds its own to its session's). A session given its own data path gets a loader with a cache
of its own, as before. A worker's first three clients then take 30-50 ms. Nothing here reads a function's configuration: the warm-up's session is the
forkserver's own, with a fixed region and placeholder credentials, and is dropped.
`tests/runtime/test_forkserver_preload.py` checks both kinds of session.
"""

from __future__ import annotations

from typing import Any

import botocore.loaders
import botocore.session

# The services the template's functions make clients of (any other loads as usual).
SERVICES = ("dynamodb", "events", "s3", "sqs", "ses")

_create_loader = botocore.loaders.create_loader


def _loader_of_botocore_data() -> Any:
    loader = _create_loader()
    session = botocore.session.Session()
    session.register_component("data_loader", loader)
    for service in SERVICES:
        session.create_client(
            service, region_name="us-east-1", aws_access_key_id="warm-up", aws_secret_access_key="warm-up"
        )
    return loader


LOADER = _loader_of_botocore_data()


def create_loader(search_path_string: str | None = None) -> Any:
    """botocore's `create_loader` as `botocore.session` calls it for each session: a new
    loader, on the default data path with the forkserver's reads as its cache."""
    loader = _create_loader(search_path_string)
    if search_path_string is None:
        loader._cache = LOADER._cache  # where `botocore.loaders.instance_cache` keeps its reads
    return loader


botocore.session.create_loader = create_loader
