"""The documents in examples/scenarios/invalid/ are refused when read, through Python too,
with the error that expected.json names (duplicate map keys, nesting beyond the limit)."""

import json

import pytest

import gang
from conftest import SCENARIOS

INVALID = SCENARIOS / "invalid"
EXPECTED = json.loads((INVALID / "expected.json").read_text())["documents"]
DOCS = sorted(p for p in INVALID.glob("*.json") if p.name != "expected.json")


def test_every_listed_document_exists():
    assert sorted(EXPECTED) == [p.name for p in DOCS]
    assert len(DOCS) >= 5


@pytest.mark.parametrize("path", DOCS, ids=[p.stem for p in DOCS])
def test_invalid_document_is_refused(path):
    want = EXPECTED[path.name]
    with pytest.raises(gang.GangError) as info:
        gang.load_scenario(path)
    err = info.value
    assert err.kind == want["error_kind"]
    if "error_field" in want:
        assert err.field == want["error_field"]
    for sub in want["message_contains"]:
        assert sub in str(err)
