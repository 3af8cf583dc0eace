"""Fixtures of the expression tests, loaded with `pytest_plugins` by the modules that use them: the
module-wide `table` and the `rich` item stored in it."""

import pytest

from expression_data import (
    RICH,
    new_key,
)
from kumo_testlib import (
    create_table_args,
    unique_name,
    wait_table_active,
)


@pytest.fixture(scope="module")
def _module_table(server):
    state = {"generation": None, "name": None}
    yield state
    if state["name"]:
        try:
            server.client().delete_table(TableName=state["name"])
        except Exception:
            pass


@pytest.fixture
def table(server, _module_table):
    """One module-wide table (pk S), made again if the shared server was restarted."""
    if _module_table["generation"] != server.generation:
        c = server.client()
        name = unique_name("expr")
        c.create_table(**create_table_args(name, ("pk", "S")))
        wait_table_active(c, name)
        _module_table.update(generation=server.generation, name=name)
    return _module_table["name"]


@pytest.fixture
def rich(api, table):
    key = new_key("rich")
    item = dict(RICH, **key)
    api.ok("PutItem", {"TableName": table, "Item": item})
    return item
