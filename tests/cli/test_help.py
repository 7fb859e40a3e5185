"""Help texts say what each command and option does, in the pipeline's order, without claims that do not hold."""

from pathlib import Path

from click.testing import CliRunner

from evalset.cli import main
from tests.conftest import REPO

PIPELINE = ["sample", "pool", "push", "pull", "judge", "agreement", "freeze", "verify", "diff", "score", "compare",
            "explain", "holes", "reusability", "estimate", "plan", "report"]


def help_text(*args):
    result = CliRunner().invoke(main, [*args, "--help"], terminal_width=200)
    assert result.exit_code == 0, result.output
    return " ".join(result.output.split())


def test_the_commands_are_listed_in_pipeline_order_with_whole_one_line_summaries():
    lines = CliRunner().invoke(main, ["--help"], terminal_width=200).output.split("Commands:\n")[1].splitlines()
    assert [line.split()[0] for line in lines if line.strip()] == PIPELINE
    assert all(line.rstrip().endswith(".") and "..." not in line for line in lines if line.strip())


def test_commands_without_set_do_not_offer_the_sets_defaults():
    for command in (("freeze", "set"), ("agreement",)):
        assert "or the set's" not in help_text(*command)
        assert "rel_level=N [1]" in help_text(*command)
    assert "(repeatable; [default], or the set's with --set; -c help: what each means): rel_level=N [1]" in help_text(
        "score")


def test_the_planned_threshold_follows_alpha_and_required_unless_options_say_so():
    assert "alpha/N" in help_text("compare") and "0.05/N" not in help_text("compare")
    for command in (("score",), ("compare",), ("plan", "power")):
        assert "Required unless --set." in help_text(*command)
    pool = help_text("pool")
    assert "Required unless --spec gives the depth: an integer in [1, 1000000]." in pool
    assert "Required unless --spec gives the output." in pool


def test_every_command_shows_an_example_on_the_shipped_data_and_its_documentation():
    for command in PIPELINE:
        text = CliRunner().invoke(main, [command, "--help"], terminal_width=200).output
        example = text.split("Example:\n", 1)[1].splitlines()[0].strip()
        assert example.startswith(f"evalset {command} ")
        page = text.rsplit("See ", 1)[1].strip()
        assert Path(REPO, page.split(",")[0].rstrip(".")).is_file(), page
