"""The ``>>>`` examples in gang.sim's (and its modules') and gang.kube's docstrings. They
run from an empty folder: an example that reads a file writes it first (issue 26
item 7: no path that exists only in a clone of the repository)."""

import doctest

import pytest

import gang
import gang._sim.documents
import gang._sim.results
import gang._sim.running
import gang._sim.sweeps
import gang.kube
import gang.sim

SIM = [gang.sim, gang._sim.documents, gang._sim.results, gang._sim.running, gang._sim.sweeps]


@pytest.mark.parametrize("module", ["gang.sim", "gang.kube"])
def test_docstring_examples(module, monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    finder = doctest.DocTestFinder(exclude_empty=True)
    modules = SIM if module == "gang.sim" else [gang.kube]
    tests = [t for m in modules for t in finder.find(m, m.__name__, globs={"gang": gang}) if t.examples]
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    for t in tests:
        runner.run(t)
    failed, attempted = runner.summarize(verbose=False)
    assert failed == 0
    names = {t.name.rsplit(".", 1)[-1] for t in tests}
    if module == "gang.sim":
        assert attempted >= 25
        for public in ("simulate", "compare", "sweep", "experiment", "report", "run_document",
                       "SimResult", "Comparison"):
            assert public in names, public
    else:
        assert attempted >= 8 and {"kube", "load", "place"} <= names
