"""`python -m jaxcc` and the `jaxcc` console script (pyproject.toml names `jaxcc.__main__:main`)."""

import sys

from jaxcc.cli.main import main

if __name__ == "__main__":
    sys.exit(main())
