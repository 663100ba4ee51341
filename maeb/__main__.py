"""`python -m maeb`: the command line (maeb.cli.commands)."""

from .cli.commands import main

raise SystemExit(main())
