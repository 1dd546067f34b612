"""Benchmarks of omb-sidecar against the physical floor and its peers.

The package owns everything the benchmark run needs and nothing the sidecar
needs: deterministic data (`catalogs`), a fast raw upstream (`fast_upstream`),
the floor and peer proxies (`relay`, `sdk_proxy`, `fastmcp_proxy`), a raw
JSON-lines client (`client`), the measurements (`cases`, `runner`) and the
report (`report`, `__main__`). Run it with `python -m bench`.

Importing this package is cheap on purpose: the relay and the upstream are
started as scripts many times per run, and their start-up is measured.
"""
