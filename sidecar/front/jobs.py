"""The owner of per-request tasks (see `sidecar.concurrency.Jobs`)."""

from sidecar.concurrency import Jobs

__all__ = ["Jobs"]
