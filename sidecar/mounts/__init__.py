"""What a face mounts: the servers a bot can reach (`reach`), the health records kept in
`<data>/mcp-health.json` (`health`), and the plan that leaves out a server with blanks
to fill, a duplicate of another, or a failed last check (`plan`).

The run-time half of bring-your-own-servers: the commands that write these records
(`check`, `servers health`) live in `sidecar_admin`. Imports nothing here, so the CLI's
early cut (`reach`) loads no more than it needs.
"""
