"""Fixtures of the Query and Scan tests, loaded with `pytest_plugins` by the modules that use them:
`tables` gives the module-wide tables made by the builders of query_data.py."""

import pytest

from kumo_testlib import (
    create_table_args,
    unique_name,
    wait_table_active,
)
from query_data import TABLE_BUILDERS


@pytest.fixture(scope="module")
def _datasets(server):
    state = {"generation": None, "names": {}}
    yield state
    c = server.client()
    for name in state["names"].values():
        try:
            c.delete_table(TableName=name)
        except Exception:
            pass


@pytest.fixture
def tables(server, _datasets):
    """tables[kind] → the name of a loaded module-wide table, built on first use (and again
    if the shared server was restarted)."""
    if _datasets["generation"] != server.generation:
        _datasets.update(generation=server.generation, names={})

    class Lazy:
        def __getitem__(self, kind):
            names = _datasets["names"]
            if kind not in names:
                hash_key, range_key, build = TABLE_BUILDERS[kind]
                name = unique_name("qs-" + kind.lower())
                c = server.client()
                c.create_table(**create_table_args(name, hash_key, range_key))
                wait_table_active(c, name)
                build(server.port, name)
                names[kind] = name
            return names[kind]

    return Lazy()
