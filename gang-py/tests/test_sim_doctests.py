"""The ``>>>`` examples in gang.sim's and gang.kube's docstrings, run from the
repository root (their paths are from there)."""

import doctest

import pytest

import gang
import gang.kube
import gang.sim

from conftest import HERE


@pytest.mark.parametrize("module", [gang.sim, gang.kube], ids=lambda m: m.__name__)
def test_docstring_examples(module, monkeypatch):
    monkeypatch.chdir(HERE.parent.parent)
    finder = doctest.DocTestFinder(exclude_empty=True)
    tests = [t for t in finder.find(module, module.__name__, globs={"gang": gang}) if t.examples]
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    for t in tests:
        runner.run(t)
    failed, attempted = runner.summarize(verbose=False)
    assert failed == 0
    names = {t.name.rsplit(".", 1)[-1] for t in tests}
    if module is gang.sim:
        assert attempted >= 25
        for public in ("simulate", "compare", "sweep", "experiment", "report", "run_document",
                       "SimResult", "Comparison"):
            assert public in names, public
    else:
        assert attempted >= 8 and {"kube", "load"} <= names
