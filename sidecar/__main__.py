"""`python -m sidecar` is the same as the `omb-sidecar` command."""

from sidecar.cli import main

raise SystemExit(main())
