"""A package's public names loaded when first used (PEP 562), so that importing a light module of the package (a
command's declared rules: ``evalset.comparing.spec``) does not load the package's statistics with it."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any


def lazy_exports(package: str, exports: dict[str, tuple[str, ...]]) -> Callable[[str], Any]:
    """The ``__getattr__`` of ``package`` for ``exports`` (a module's name -> the names it gives the package)."""
    home = {name: module for module, names in exports.items() for name in names}

    def __getattr__(name: str) -> Any:
        if name not in home:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(importlib.import_module(home[name]), name)

    return __getattr__


def names(exports: dict[str, tuple[str, ...]]) -> list[str]:
    """The package's ``__all__``."""
    return sorted(name for module_names in exports.values() for name in module_names)
