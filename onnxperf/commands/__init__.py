"""One module per subcommand. Each exposes ``add_parser(subparsers)`` and ``run(args) -> int``."""
