"""The `holodesk` command: one module per subcommand; only parses and prints."""
