"""evalset: build search evaluation sets the way TREC does, and score rankers on them honestly."""

__version__ = "0.1.0"
"""The package's version, the one place it is written (``pyproject.toml`` reads it): a constant, since asking
``importlib.metadata`` costs every command about 0.1 s before any work."""
