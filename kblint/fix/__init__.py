"""Safe fixes: `kblint validate --fix` writes them, `--diff` shows them (README "Autofix")."""
