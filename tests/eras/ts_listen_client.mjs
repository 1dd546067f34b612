// The TypeScript SDK's client (npm @modelcontextprotocol/client) at 2026-07-28, pinned,
// against a sidecar: opens a `subscriptions/listen` stream for tool list changes, calls
// the tool named on the command line, waits for the change and lists the tools again.
//
//   node tests/eras/ts_listen_client.mjs URL TOKEN TOOL
//
// Prints one JSON line: {"honored": ..., "heard": [methods...], "tools": [names...]}.
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const [url, token, tool] = process.argv.slice(2);
const modules = process.env.NODE_MODULES || path.join(import.meta.dirname, '..', 'npm', 'node_modules');
const entry = path.join(modules, '@modelcontextprotocol', 'client', 'dist', 'index.mjs');
const { Client, StreamableHTTPClientTransport } = await import(pathToFileURL(entry).href);

const heard = [];
let changed;
const change = new Promise((resolve) => { changed = resolve; });
const client = new Client({ name: 'ts-listen', version: '1.0.0' },
  { versionNegotiation: { mode: { pin: '2026-07-28' } } });
client.setNotificationHandler('notifications/tools/list_changed', () => {
  heard.push('notifications/tools/list_changed');
  changed();
});
const transport = new StreamableHTTPClientTransport(new URL(url),
  { requestInit: { headers: { Authorization: `Bearer ${token}` } } });
const bounded = (promise, what) => Promise.race([promise, new Promise((_, reject) =>
  setTimeout(() => reject(new Error(`${what} did not come within 30 s`)), 30000))]);

await client.connect(transport);
const subscription = await client.listen({ toolsListChanged: true });
await client.callTool({ name: tool, arguments: {} });
await bounded(change, 'the tools list change');
const { tools } = await client.listTools();
await subscription.close();
console.log(JSON.stringify({ honored: subscription.honoredFilter, heard, tools: tools.map((t) => t.name) }));
await client.close();
process.exit(0);
