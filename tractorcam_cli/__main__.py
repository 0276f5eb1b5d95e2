"""``python -m tractorcam_cli`` = the ``tractorcam`` command."""

from tractorcam_cli.main import main

main()
