"""Observation of the gate's calls: the audit file, the record of each ended call, the
Prometheus `/metrics` families and the OpenTelemetry traces, and the one door their
label values pass.

`record` is called once per ended call by the chain and hands the call to the
observers attached with `Gate.observe`; `metrics` and `tracing` attach from outside
(the fronts), so the gate never imports them. Nothing is imported here: prometheus_client
and opentelemetry load only with the module that needs them.
"""
