// Drives shims/pi/omb-sidecar.ts the way pi does, without pi: loads it with jiti (pi's own
// TypeScript loader, from tests/engines), hands it a stand-in for pi's extension API, and
// runs a scripted session against the real sidecar. Prints one JSON report on stdout.
//
//   node pi_harness.mjs EXTENSION.ts      (OMB_SIDECAR_LAUNCH names the launch file)

import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const require = createRequire(path.join(here, "..", "engines", "package.json"));
const { createJiti } = require("jiti");

const registered = new Map();
const handlers = { tool_call: [], session_shutdown: [] };
const pi = {
  registerTool(tool) {
    registered.set(tool.name, tool);
  },
  on(event, handler) {
    handlers[event].push(handler);
  },
};

async function screen(name) {
  for (const handler of handlers.tool_call) {
    const verdict = await handler({ toolName: name, toolCallId: "c1", input: {} });
    if (verdict?.block) return verdict;
  }
  return undefined;
}

async function run(name, params) {
  const verdict = await screen(name);
  if (verdict) return { blocked: verdict.reason };
  try {
    return { result: await registered.get(name).execute("c1", params, undefined) };
  } catch (error) {
    return { error: String(error.message ?? error) };
  }
}

async function until(check, what) {
  const deadline = Date.now() + 20000;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

const jiti = createJiti(import.meta.url);
const extension = await jiti.import(path.resolve(process.argv[2]), { default: true });
await extension(pi);
const report = { initial: [...registered.keys()] };
const echo = registered.get("fault__echo");
report.echoParameters = echo?.parameters;
report.echo = await run("fault__echo", { nonce: "n-1" });
report.toolError = await run("fault__tool_error", { message: "bad input" });
report.rpcError = await run("fault__error", { code: -32042, message: "upstream says no" });

// The upstream adds a tool, then takes it away: pi keeps it registered, the hook refuses it.
await run("fault__change_tools", { names: ["gadget"] });
await until(() => registered.has("fault__gadget"), "fault__gadget to be registered");
report.gadgetBefore = await run("fault__gadget", { nonce: "n-2" });
await run("fault__change_tools", { names: [] });
const deadline = Date.now() + 20000;
while (!(await screen("fault__gadget")) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
report.gadgetAfter = await run("fault__gadget", { nonce: "n-3" });
for (const handler of handlers.session_shutdown) await handler();
console.log(JSON.stringify(report));
