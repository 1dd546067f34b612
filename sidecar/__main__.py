"""`python -m sidecar` is the same as the `omb-sidecar` command."""

from sidecar.entry import main

raise SystemExit(main())
