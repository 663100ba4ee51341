"""`python -m maeb`: the command line (maeb.cli)."""

from .cli import main

raise SystemExit(main())
