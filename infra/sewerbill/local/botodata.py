"""botocore's data files read once, in the forkserver, for every function's process.

A function's first boto3 clients read and parse botocore's JSON data (the endpoints and
partitions, each service's model and endpoint rules): 150-220 ms of CPU for a worker's
first three clients, in each of the seven workers of a year of schedules, the same files
each time. The forkserver imports this module (`invoker.PRELOAD`): it makes one botocore
`Loader` and has it read what creating a client of each service in `SERVICES` reads. Every
worker forked afterwards hands that loader to each botocore session whose data path is
botocore's default (no ``AWS_DATA_PATH``): the sessions of a process then share one loader,
as the clients of one session always do, and its caches hold exactly what botocore's own
loader holds after its first reads (a model with its extras merged, once). A session given
its own data path gets a loader of its own, as before. A worker's first three clients then
take 30-50 ms. Nothing here reads a function's configuration: the warm-up's session is the
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
    """botocore's `create_loader` as `botocore.session` calls it for each session: the shared
    loader for the default data path, a new one for any other."""
    if search_path_string is None:
        return LOADER
    return _create_loader(search_path_string)


botocore.session.create_loader = create_loader
