"""Shared stores for replicas (`store.url`): the Redis backend of held results, and the
wiring that shares a gate's held results, confirmation states and pins (`share`)."""
