"""evalset: build search evaluation sets the way TREC does, and score rankers on them honestly."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("evalset")
except PackageNotFoundError:  # running from a source tree without an install
    __version__ = "0.0.0"
