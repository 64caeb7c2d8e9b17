"""The `>>>` examples in the docstrings (of the package, the native module's classes,
methods and functions) and in gang-py/README.md, run as doctests."""

import doctest
import pathlib

import gang
import gang._gang

README = pathlib.Path(__file__).resolve().parent.parent / "README.md"


def collect():
    finder = doctest.DocTestFinder(exclude_empty=True)
    tests = {}
    for module in (gang, gang._gang):
        for t in finder.find(module, module.__name__):
            if t.examples:
                tests.setdefault(t.name.replace("gang._gang.", "gang."), t)
    # Classes re-exported from gang._gang have __module__ "gang": look inside them too.
    for name in gang.__all__:
        obj = getattr(gang, name)
        for t in finder.find(obj, f"gang.{name}", module=False, globs={}):
            if t.examples:
                tests.setdefault(t.name, t)
    return tests


def test_docstring_examples():
    tests = collect()
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    for name in sorted(tests):
        runner.run(tests[name])
    failed, attempted = runner.summarize(verbose=False)
    assert attempted >= 40, f"only {attempted} examples found in {sorted(tests)}"
    for must in ("gang.Inventory", "gang.Placement", "gang.Diagnosis", "gang.Quantity", "gang.load_scenario"):
        assert must in tests, must
    assert failed == 0


def test_readme_examples(monkeypatch):
    monkeypatch.chdir(README.parent.parent)  # the README's paths are from the repository root
    result = doctest.testfile(str(README), module_relative=False,
                              optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.attempted >= 5, "README examples not found"
    assert result.failed == 0
