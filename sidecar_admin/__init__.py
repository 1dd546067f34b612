"""The admin side of bring-your-own-servers: the `omb-sidecar add | import | check |
servers | signin | signout` commands, and the health schedule a long-lived HTTP front
runs when `health.schedule` is set. Shipped in the same wheel as `sidecar`; the proxy
never imports it (the CLI loads it inside the function of an admin command).

Rooms: `forms`, `shell` and `jsonish` (reading pastes), `importer` (paste -> named, safe
entries), `homes` (the servers the engines on this machine already use), `store` (the
config file, written atomically and 0600; write-only values), `check` and `signin` (one
bounded handshake and listing; RFC 9728 hints on a refusal), `health` (when checks come
due) and `health_schedule` (the same beside a live face), `review` (what changed since
approval), `signin_cmd` and `signin_listen` (the browser sign-in), `session` (one
command's config file, redactor and output; the check that turns an entry on), `views`
and `commands` (what is printed, and argv). The rules an entry must pass are the config's
(`sidecar.config.rules`); the records and the mount plan are the runtime's
(`sidecar.mounts`).
"""
