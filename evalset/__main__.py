from evalset.cli import run

run()
