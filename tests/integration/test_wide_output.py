"""Off a terminal, the CLI never cuts code, paths or ids to a made-up width of 80 columns."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration

SCRIPT = Path(sys.executable).with_name("engram")
LONG_CALL = (
    "    return compute_the_weighted_average_of(first_measurement, second_measurement, "
    "third_measurement, fourth_measurement)"
)


def _engram(project: Path, home: Path, *args: str) -> str:
    env = {k: v for k, v in os.environ.items() if k not in {"COLUMNS", "LINES"}}
    env.update(ENGRAM_HOME=str(home), ENGRAM_EMBEDDING_PROVIDER="hash")
    done = subprocess.run(
        [str(SCRIPT), *args, "--path", str(project)],
        capture_output=True,
        text=True,
        timeout=180,
        stdin=subprocess.DEVNULL,
        env=env,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "proj" / "a_rather_deeply_nested_package" / "with_a_long_module_folder"
    folder.mkdir(parents=True)
    (folder / "weighted_measurements_module.py").write_text(
        "def compute_the_weighted_average_of(a, b, c, d):\n    return (a + b + c + d) / 4\n\n\n"
        f"def summarise_measurements():\n{LONG_CALL}\n"
    )
    return tmp_path / "proj"


def test_slice_search_and_doctor_keep_whole_lines_in_a_pipe(project, tmp_path):
    home = tmp_path / "home"
    _engram(project, home, "index")
    sliced = _engram(project, home, "slice", "summarise_measurements")
    assert LONG_CALL.strip() in sliced, sliced
    path = (
        "a_rather_deeply_nested_package/with_a_long_module_folder/weighted_measurements_module.py"
    )
    found = _engram(project, home, "search", "compute_the_weighted_average_of", "--mode", "exact")
    assert f"{path}:1-2" in found and "…" not in found, found
    doctor = _engram(project, home, "doctor")
    assert str(home) in doctor and "…" not in doctor, doctor
