"""The command line starts cheaply: building the parser imports no stage of the pipeline, and a
command imports its own group only (what it runs, it imports when it runs)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from bytepair.cli import export
from bytepair.cli.main import COMMANDS, _build
from bytepair.formats import transformers_dir

#: Packages the parser never needs: progress bars, clusters, Parquet, arrays, version metadata.
HEAVY = ("tqdm", "dask", "distributed", "pyarrow", "numpy", "importlib.metadata", "logging")


def _loaded(code: str) -> list[str]:
    """The modules a fresh interpreter holds after ``code``."""
    script = f"import sys\n{code}\nimport json; print(json.dumps(sorted(sys.modules)))"
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    return json.loads(done.stdout.splitlines()[-1])


def _stages(modules: list[str]) -> list[str]:
    """The package's modules beyond the command line's own and the pattern names it lists."""
    own = ("bytepair._util", "bytepair.cli", "bytepair.split.patterns")
    return [name for name in modules if name.startswith("bytepair.") and name != "bytepair.split"
            and not name.startswith(own)]


def test_the_whole_parser_imports_no_stage():
    # What `bytepair --help` and docs/command-line.md build: every command's options.
    modules = _loaded("from bytepair.cli.main import _build\n_build()")
    assert _stages(modules) == []
    assert [name for name in HEAVY if name in modules] == []


@pytest.mark.parametrize("command", ["count", "encode", "evaluate", "export", "inspect"])
def test_a_command_imports_its_group_alone(command):
    modules = _loaded("from bytepair.cli.main import main\n"
                      f"assert main([{command!r}, '--help']) == 0")
    assert _stages(modules) == []
    assert [name for name in HEAVY if name in modules] == []
    groups = {name.removeprefix("bytepair.cli.") for name in modules
              if name.startswith("bytepair.cli.")}
    assert groups & set(COMMANDS.values()) == {COMMANDS[command]}


def test_count_imports_no_trainer_no_model_format_and_no_sentencepiece_text(tmp_path):
    (tmp_path / "a.txt").write_text("hello world, hello again\n")
    modules = _loaded("from bytepair.cli.main import main\n"
                      f"assert main(['count', {str(tmp_path / 'a.txt')!r}, '--workers', '1', "
                      f"'-o', {str(tmp_path / 'a.counts')!r}, '-q']) == 0")
    assert (tmp_path / "a.counts").exists()
    assert [name for name in modules if name.startswith(("bytepair.training.api",
            "bytepair.training.in_memory", "bytepair.training.trainer", "bytepair.formats",
            "bytepair.evaluation", "bytepair.teach", "bytepair.split.spm_text", "tqdm"))] == []


def test_training_names_resolve_at_first_use():
    import bytepair.training as training
    from bytepair.training import api, counting, in_memory, spec

    assert (training.count, training.train, training.encode, training.TrainSpec) == (
        counting.count, api.train, in_memory.encode, spec.TrainSpec)
    assert set(training.__all__) <= set(dir(training))
    with pytest.raises(AttributeError, match="no attribute 'nothing'"):
        training.nothing  # noqa: B018


def test_commands_names_each_command_s_group_in_help_order():
    _, commands = _build()
    assert list(commands) == list(COMMANDS)
    for command in COMMANDS:
        _, alone = _build(command)
        assert command in alone
        assert alone[command].format_help() == commands[command].format_help()


def test_export_offers_every_role_of_a_transformers_directory():
    assert export.ROLES == transformers_dir.ROLES
