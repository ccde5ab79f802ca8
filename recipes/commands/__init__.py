"""One module per ``referee`` subcommand, each with ``add_parser(subparsers)`` and ``run(args)``."""
