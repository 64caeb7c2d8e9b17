"""examples/python/sim_*.py: each answers one of the guides' questions in one command,
and fails (exit 1) when a conclusion it states does not hold."""

import subprocess
import sys

import pytest

from conftest import EXAMPLES


def run(*args, cwd=None):
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, cwd=cwd, timeout=300)


@pytest.mark.parametrize("script,conclusions", [("sim_small_experiment.py", 8), ("sim_validation_suite.py", 21)])
def test_example_conclusions_hold(script, conclusions, tmp_path):
    extra = ["--report", str(tmp_path / "r.html")] if script == "sim_small_experiment.py" else []
    p = run(str(EXAMPLES / script), *extra)
    assert p.returncode == 0, p.stdout + p.stderr
    assert p.stdout.count("[ok]") == conclusions and "FAILED" not in p.stdout
    if extra:
        assert (tmp_path / "r.html").read_text().count("<img ") == 4


def test_a_conclusion_that_does_not_hold_fails_the_example():
    p = run("-c", "import sim_common as s; s.check(True, 'fine'); s.check(False, 'wrong'); s.done()",
            cwd=EXAMPLES)
    assert p.returncode == 1 and "[FAILED] wrong" in p.stdout and "1 conclusion(s) did not hold" in p.stderr


def test_the_rack_rule_notebook_answers_its_question(tmp_path):
    """Issue 26's example: three loads x five policies x three seeds on Dask, one
    DataFrame, one plot, one report, its conclusions asserted in the script."""
    pytest.importorskip("distributed")
    pytest.importorskip("pandas")
    script = EXAMPLES / "sim_rack_rule.py"
    assert len(script.read_text().splitlines()) < 40
    p = run(str(script), str(tmp_path))
    assert p.returncode == 0, p.stdout + p.stderr
    assert p.stdout.rstrip().endswith("conclusions hold")
    assert (tmp_path / "rack_rule.png").read_bytes().startswith(b"\x89PNG")
    html = (tmp_path / "rack_rule.html").read_text()
    assert 'id="by-parameter"' in html and html.count("<tr>") >= 45
