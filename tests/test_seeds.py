"""Every random choice draws from :func:`evalset.seeds.generator`, whose seed is checked once: a bad seed is one line
naming it, from the library and from every command."""


import numpy as np
import pytest
from click.testing import CliRunner

from evalset.cli import main
from evalset.errors import InputError
from evalset.seeds import generator


@pytest.mark.parametrize("command", [
    ["compare", "--qrels", "QRELS", "RUN_A", "RUN_B", "--seed", "-1"],
    ["compare", "--qrels", "QRELS", "--all", "RUN_A", "RUN_B", "--seed", "-1"],
])
def test_a_negative_seed_is_one_line_naming_it_not_numpys_traceback(shared_data, command):
    dl19 = shared_data / "dl19"
    runs = dl19 / "runs" / "official_top100"
    given = {"QRELS": str(dl19 / "qrels.txt"), "RUN_A": str(runs / "bm25base_p.run.gz"),
             "RUN_B": str(runs / "p_bert.run.gz")}
    result = CliRunner().invoke(main, [given.get(word, word) for word in command])
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert result.stderr.strip() == "evalset: error: Invalid value for '--seed': must be a non-negative integer, got -1"


@pytest.mark.parametrize("seed", [-1, 1.5, True, "7"])
def test_every_generator_takes_a_checked_seed(seed):
    with pytest.raises(InputError, match="seed must be a non-negative integer"):
        generator(seed)
    assert generator(7).integers(100) == np.random.default_rng(7).integers(100)
    assert generator(7, 3).integers(100) == np.random.default_rng([7, 3]).integers(100)
