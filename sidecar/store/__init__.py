"""Shared stores for replicas: the Redis backend of held results (`store.url`)."""
