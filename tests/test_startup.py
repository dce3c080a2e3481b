"""Every command's --help and a bad option return without importing torch (jackson.hparams and each experiment's
torch-free config: the cells and runs import torch only when they are built).  Each case runs in a fresh process
with `-X importtime`, which lists every module the process imported."""
from __future__ import annotations

import subprocess
import sys

import pytest

# (entry module, function, argv, exit code)
CASES = [
    ("jackson.rate_sweep.cli", "sweep_main", ["--help"], 0),
    ("jackson.rate_sweep.cli", "sweep_main", ["--alpha", "-1"], 2),
    ("jackson.app_b.cli", "tasks_main", ["nearest-point", "--help"], 0),
    ("jackson.app_b.cli", "tasks_main", ["nearest-point", "--m-h", "0"], 2),
    ("jackson.lab_report.page", "main", ["--help"], 0),
    ("jackson.rate_sweep.device_check", "main", ["--help"], 0),
    ("rnn_compare.cli", "compare_main", ["--help"], 0),
    ("rnn_compare.cli", "compare_main", ["--seeds", "0,0"], 2),
    ("rnn_compare.cli", "spectrum_main", ["--help"], 0),
    ("cot_dp.entry", "main", ["sweep", "--help"], 0),
    ("cot_dp.entry", "main", ["sweep", "--d-model", "3"], 2),
    ("cot_dp.entry", "main", ["data", "--help"], 0),
    ("cot_dp.entry", "main", ["train", "--help"], 0),
    ("cot_dp.entry", "main", ["mask", "--help"], 0),
]


def imported_torch(stderr: str) -> bool:
    return any(line.startswith("import time:") and line.rsplit("|", 1)[-1].strip() == "torch"
               for line in stderr.splitlines())


def test_the_check_sees_torch():
    r = subprocess.run([sys.executable, "-X", "importtime", "-c", "import torch"], capture_output=True, text=True)
    assert imported_torch(r.stderr)


@pytest.mark.parametrize("module, function, argv, code", CASES, ids=[f"{c[0]}:{' '.join(c[2])}" for c in CASES])
def test_help_and_option_errors_import_no_torch(module, function, argv, code, tmp_path):
    src = f"import sys; from {module} import {function} as f; sys.exit(f({argv!r}))"
    r = subprocess.run([sys.executable, "-X", "importtime", "-c", src], capture_output=True, text=True, cwd=tmp_path,
                       timeout=120)
    assert r.returncode == code, (r.stdout[-500:], r.stderr[-500:])
    assert not imported_torch(r.stderr), f"{module} {' '.join(argv)} imported torch"
    if code == 2:
        errors = [l for l in r.stderr.splitlines() if not l.startswith("import time:")]
        assert len(errors) == 1 and ": error: " in errors[0], errors


def test_report_help_loads_no_rule_module(tmp_path):
    """jackson-report reads the lab's claims (and with them every experiment's rules) on first use, not at import:
    its --help loads none of the rule modules."""
    src = ("import sys\nfrom jackson.lab_report.page import main\ntry:\n    main(['--help'])\nexcept SystemExit:\n"
           "    pass\nprint(sorted(m for m in sys.modules if m.endswith('.rules')))")
    r = subprocess.run([sys.executable, "-c", src], capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert r.returncode == 0, r.stderr[-500:]
    assert r.stdout.strip().splitlines()[-1] == "[]", r.stdout[-500:]
    r = subprocess.run([sys.executable, "-c", "import sys; from jackson.lab_report.claims import CLAIMS; "
                        "print(sorted(m for m in sys.modules if m.endswith('.rules')))"],
                       capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert "jackson.rate_sweep.rules" in r.stdout, r.stdout      # the check sees the rule modules once they load


def test_the_lab_claims_read_on_first_use_are_one_tuple():
    from jackson.lab_report import claims
    assert claims.CLAIMS is claims.CLAIMS is claims.lab_claim_set() and len(claims.CLAIMS) > 0
    with pytest.raises(AttributeError):
        claims.NOT_A_NAME
