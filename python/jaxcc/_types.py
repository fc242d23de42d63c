"""Type aliases of the public API's arguments (for annotations only; python/jaxcc/py.typed)."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import TypeAlias

# dict name -> arg_spec tokens (a list, one space-separated string, or None: inferred from the
# C++ signature), a list of names, or None (every `// @BE` annotation).
Functions: TypeAlias = "Mapping[str, Sequence[str] | str | None] | Sequence[str] | None"
# Inline source: one string or a list of strings (joined with newlines).
Sources: TypeAlias = "str | Sequence[str]"
PathArg: TypeAlias = "str | os.PathLike[str]"
# Compiler or linker flags, include directories, file patterns.
StringList: TypeAlias = "Sequence[str | os.PathLike[str]] | str | None"
# "8.0", "sm_90a", "80,90", 8.0, or a list of those.
ComputeCapability: TypeAlias = "str | float | Sequence[str | float] | None"
