"""Confirmation: a consequential call is put to the person before the policy lets it run.

`stage` asks (through the engine's elicitation) and remembers what was spent; `form` is
the one rendering of what the person reads; `sealed` carries a pending confirmation in
the stateless revision, where the sidecar cannot ask mid-call. The engine's side (which
way this engine can be asked) is `sidecar.front.confirming`.
Nothing is imported here: `sealed` loads cryptography only when a state is sealed.
"""
