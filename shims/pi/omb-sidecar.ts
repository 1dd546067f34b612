/**
 * omb-sidecar for pi: the face's tools as pi tools, every call through the sidecar.
 *
 * pi has no MCP client of its own; this extension is one. It is loaded with
 * `pi -ne -e omb-sidecar.ts` (no other extension is discovered, which is also why pi is
 * never bridged) and reads its launch from the JSON file named by `OMB_SIDECAR_LAUNCH`:
 *
 *   {"command": "omb-sidecar", "args": ["--config", "..."], "env": {...}}   start it (stdio)
 *   {"url": "http://127.0.0.1:PORT/mcp/omb", "tokenFile": "..."}             reach it (HTTP)
 *
 * At load it initializes the session, lists the face's tools (the sidecar's first list
 * waits for its upstreams) and registers each with its input schema as pi's parameters.
 * A call is sent as `tools/call` with pi's abort signal relayed as a cancellation; the
 * result's content comes back as pi content, and an error result or a refusal is thrown
 * so pi marks it as an error. When the sidecar announces a changed list, new tools are
 * registered and tools it no longer lists are refused in pi's `tool_call` hook, with the
 * reason, before they run. At session shutdown the sidecar is stopped (stdin closed, then
 * SIGTERM, then SIGKILL). One file, no build step, no dependencies: Node's own modules.
 */

import { spawn, type ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";

type JsonObject = Record<string, unknown>;

interface Launch {
  command?: string;
  args?: string[];
  env?: Record<string, string>;
  cwd?: string;
  url?: string;
  tokenFile?: string;
  requestTimeoutSeconds?: number;
}

interface McpTool {
  name: string;
  title?: string;
  description?: string;
  inputSchema?: JsonObject;
}

type PiContent = { type: "text"; text: string } | { type: "image"; data: string; mimeType: string };

interface PiToolResult {
  content: PiContent[];
  details: JsonObject;
}

interface PiToolCallEvent {
  toolName: string;
  toolCallId: string;
  input: unknown;
}

interface PiApi {
  registerTool(tool: {
    name: string;
    label: string;
    description: string;
    parameters: JsonObject;
    execute(toolCallId: string, params: unknown, signal?: AbortSignal): Promise<PiToolResult>;
  }): void;
  on(event: "tool_call", handler: (event: PiToolCallEvent) => unknown): void;
  on(event: "session_shutdown", handler: () => unknown): void;
}

const PROTOCOL = "2025-06-18";
const CLIENT = { name: "omb-sidecar-pi", version: "1.0.0" };

class RpcError extends Error {
  constructor(readonly code: number, message: string) {
    super(message);
  }
}

// -- transports: one JSON-RPC peer over stdio or Streamable HTTP ------------------------

type Notify = (method: string, params: unknown) => void;

interface Transport {
  request(method: string, params: JsonObject, signal?: AbortSignal): Promise<unknown>;
  notify(method: string, params?: JsonObject): Promise<void>;
  close(): Promise<void>;
}

interface Waiter {
  resolve(value: unknown): void;
  reject(error: Error): void;
}

function settle(waiter: Waiter | undefined, message: JsonObject): void {
  if (!waiter) return;
  const error = message.error as JsonObject | undefined;
  if (error) waiter.reject(new RpcError(Number(error.code ?? -32603), String(error.message ?? "error")));
  else waiter.resolve(message.result);
}

class StdioTransport implements Transport {
  private readonly child: ChildProcess;
  private readonly waiting = new Map<number, Waiter>();
  private buffer = "";
  private nextId = 1;
  private exited: Promise<void>;

  constructor(launch: Launch, private readonly onNotify: Notify) {
    this.child = spawn(launch.command as string, launch.args ?? [], {
      cwd: launch.cwd,
      env: { ...process.env, ...(launch.env ?? {}) },
      stdio: ["pipe", "pipe", "inherit"],
    });
    this.exited = new Promise((resolve) => this.child.once("exit", () => resolve()));
    this.child.once("exit", () => this.failAll(new Error("the sidecar exited")));
    this.child.once("error", (error) => this.failAll(error));
    this.child.stdout?.setEncoding("utf8");
    this.child.stdout?.on("data", (chunk: string) => this.take(chunk));
  }

  private failAll(error: Error): void {
    for (const waiter of this.waiting.values()) waiter.reject(error);
    this.waiting.clear();
  }

  private take(chunk: string): void {
    this.buffer += chunk;
    let cut: number;
    while ((cut = this.buffer.indexOf("\n")) >= 0) {
      const line = this.buffer.slice(0, cut).trim();
      this.buffer = this.buffer.slice(cut + 1);
      if (line) this.dispatch(line);
    }
  }

  private dispatch(line: string): void {
    let message: JsonObject;
    try {
      message = JSON.parse(line);
    } catch {
      return; // not a frame: skipped
    }
    const method = typeof message.method === "string" ? message.method : undefined;
    if (method !== undefined && message.id !== undefined) {
      // A request from the sidecar: answer ping, refuse the rest (no capability declared).
      const answer = method === "ping" ? { result: {} } : { error: { code: -32601, message: `${method} is not supported` } };
      this.write({ jsonrpc: "2.0", id: message.id, ...answer });
    } else if (method !== undefined) {
      this.onNotify(method, message.params);
    } else if (typeof message.id === "number") {
      const waiter = this.waiting.get(message.id);
      this.waiting.delete(message.id);
      settle(waiter, message);
    }
  }

  private write(message: JsonObject): void {
    this.child.stdin?.write(JSON.stringify(message) + "\n");
  }

  request(method: string, params: JsonObject, signal?: AbortSignal): Promise<unknown> {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      if (signal?.aborted) return reject(new Error("cancelled"));
      const onAbort = () => {
        this.waiting.delete(id);
        this.write({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: id, reason: "cancelled in pi" } });
        reject(new Error("cancelled"));
      };
      signal?.addEventListener("abort", onAbort, { once: true });
      const done = () => signal?.removeEventListener("abort", onAbort);
      this.waiting.set(id, {
        resolve: (value) => (done(), resolve(value)),
        reject: (error) => (done(), reject(error)),
      });
      this.write({ jsonrpc: "2.0", id, method, params });
    });
  }

  async notify(method: string, params?: JsonObject): Promise<void> {
    this.write({ jsonrpc: "2.0", method, ...(params ? { params } : {}) });
  }

  async close(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    this.child.stdin?.end();
    for (const [signal, wait] of [[null, 3000], ["SIGTERM", 3000], ["SIGKILL", 1000]] as const) {
      if (signal) this.child.kill(signal);
      const timer = new Promise<boolean>((resolve) => setTimeout(() => resolve(false), wait).unref());
      if (await Promise.race([this.exited.then(() => true), timer])) return;
    }
  }
}

/** Complete server-sent events in `text` as JSON messages, and the incomplete rest. */
function parseEvents(text: string): { messages: unknown[]; rest: string } {
  const blocks = text.split(/\r?\n\r?\n/);
  const rest = blocks.pop() ?? "";
  const messages: unknown[] = [];
  for (const block of blocks) {
    const data = block
      .split(/\r?\n/)
      .filter((line) => line.startsWith("data:"))
      .map((line) => line.slice(5).replace(/^ /, ""))
      .join("\n");
    if (!data) continue;
    try {
      messages.push(JSON.parse(data));
    } catch {
      // not a frame: skipped
    }
  }
  return { messages, rest };
}

class HttpTransport implements Transport {
  private session: string | undefined;
  private protocol: string | undefined;
  private nextId = 1;
  private readonly token: string | undefined;
  private readonly listening = new AbortController();

  constructor(private readonly launch: Launch, private readonly onNotify: Notify) {
    this.token = launch.tokenFile ? readFileSync(launch.tokenFile, "utf8").trim() : undefined;
  }

  private headers(): Record<string, string> {
    const headers: Record<string, string> = {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
    };
    if (this.token) headers.authorization = `Bearer ${this.token}`;
    if (this.session) headers["mcp-session-id"] = this.session;
    if (this.protocol) headers["mcp-protocol-version"] = this.protocol;
    return headers;
  }

  private async post(body: JsonObject, signal?: AbortSignal): Promise<Response> {
    const response = await fetch(this.launch.url as string, {
      method: "POST", headers: this.headers(), body: JSON.stringify(body), signal,
    });
    const session = response.headers.get("mcp-session-id");
    if (session) this.session = session;
    if (!response.ok && response.status !== 202) {
      throw new RpcError(-32603, `the sidecar answered HTTP ${response.status}`);
    }
    return response;
  }

  async request(method: string, params: JsonObject, signal?: AbortSignal): Promise<unknown> {
    const id = this.nextId++;
    const onAbort = () =>
      void this.notify("notifications/cancelled", { requestId: id, reason: "cancelled in pi" }).catch(() => undefined);
    signal?.addEventListener("abort", onAbort, { once: true });
    try {
      const response = await this.post({ jsonrpc: "2.0", id, method, params }, signal);
      const type = response.headers.get("content-type") ?? "";
      const messages = type.includes("text/event-stream") ? await this.events(response) : [await response.json()];
      let answer: JsonObject | undefined;
      for (const message of messages as JsonObject[]) {
        if (message.id === id && message.method === undefined) answer = message;
        else if (typeof message.method === "string" && message.id === undefined) this.onNotify(message.method, message.params);
      }
      if (!answer) throw new RpcError(-32603, `no answer to ${method}`);
      if (method === "initialize") this.protocol = String((answer.result as JsonObject)?.protocolVersion ?? PROTOCOL);
      return await new Promise((resolve, reject) => settle({ resolve, reject }, answer as JsonObject));
    } finally {
      signal?.removeEventListener("abort", onAbort);
    }
  }

  private async events(response: Response): Promise<unknown[]> {
    return parseEvents((await response.text()) + "\n\n").messages;
  }

  /** The server's own stream (GET): notifications such as tools/list_changed arrive here. */
  async listen(): Promise<void> {
    const response = await fetch(this.launch.url as string, {
      method: "GET", headers: { ...this.headers(), accept: "text/event-stream" }, signal: this.listening.signal,
    }).catch(() => undefined);
    const reader = response?.ok ? response.body?.getReader() : undefined;
    if (!reader) return;
    const decoder = new TextDecoder();
    let pending = "";
    for (;;) {
      const chunk = await reader.read().catch(() => ({ done: true, value: undefined }));
      if (chunk.done) return;
      const parsed = parseEvents(pending + decoder.decode(chunk.value, { stream: true }));
      pending = parsed.rest;
      for (const message of parsed.messages as JsonObject[]) {
        if (typeof message.method === "string" && message.id === undefined) this.onNotify(message.method, message.params);
      }
    }
  }

  async notify(method: string, params?: JsonObject): Promise<void> {
    await this.post({ jsonrpc: "2.0", method, ...(params ? { params } : {}) });
  }

  async close(): Promise<void> {
    this.listening.abort();
    if (!this.session) return;
    await fetch(this.launch.url as string, { method: "DELETE", headers: this.headers() }).catch(() => undefined);
  }
}

// -- the face as pi tools --------------------------------------------------------------

function parametersOf(tool: McpTool): JsonObject {
  const schema = tool.inputSchema;
  if (schema && typeof schema === "object" && schema.type === "object") return schema;
  return { type: "object", properties: {}, ...(schema ?? {}) };
}

function contentOf(result: JsonObject): PiContent[] {
  const blocks = Array.isArray(result.content) ? (result.content as JsonObject[]) : [];
  const content: PiContent[] = blocks.map((block) => {
    if (block.type === "text") return { type: "text", text: String(block.text ?? "") };
    if (block.type === "image") return { type: "image", data: String(block.data), mimeType: String(block.mimeType) };
    return { type: "text", text: JSON.stringify(block) };
  });
  if (content.length === 0 && result.structuredContent !== undefined) {
    content.push({ type: "text", text: JSON.stringify(result.structuredContent) });
  }
  return content;
}

class Face {
  private offered = new Map<string, McpTool>();
  private readonly registered = new Set<string>();

  constructor(private readonly pi: PiApi, private readonly transport: Transport) {}

  async refresh(): Promise<void> {
    const tools = new Map<string, McpTool>();
    let cursor: string | undefined;
    do {
      const page = (await this.transport.request("tools/list", cursor ? { cursor } : {})) as JsonObject;
      for (const tool of (page.tools as McpTool[]) ?? []) tools.set(tool.name, tool);
      cursor = typeof page.nextCursor === "string" && page.nextCursor ? page.nextCursor : undefined;
    } while (cursor);
    this.offered = tools;
    for (const tool of tools.values()) this.register(tool);
  }

  private register(tool: McpTool): void {
    if (this.registered.has(tool.name)) return;
    this.registered.add(tool.name);
    this.pi.registerTool({
      name: tool.name,
      label: tool.title ?? tool.name,
      description: tool.description ?? "",
      parameters: parametersOf(tool),
      execute: (_id, params, signal) => this.call(tool.name, params, signal),
    });
  }

  async call(name: string, params: unknown, signal?: AbortSignal): Promise<PiToolResult> {
    const args = params && typeof params === "object" ? (params as JsonObject) : {};
    const result = (await this.transport.request("tools/call", { name, arguments: args }, signal)) as JsonObject;
    const content = contentOf(result);
    if (result.isError === true) {
      throw new Error(content.map((c) => (c.type === "text" ? c.text : `[${c.type}]`)).join("\n") || `${name} failed`);
    }
    return { content, details: { structuredContent: result.structuredContent ?? null } };
  }

  /** pi's tool_call hook: a tool of ours the sidecar no longer lists is refused before it runs. */
  screen(event: PiToolCallEvent): { block: true; reason: string } | undefined {
    if (!this.registered.has(event.toolName) || this.offered.has(event.toolName)) return undefined;
    return { block: true, reason: `${event.toolName} is no longer offered by omb-sidecar` };
  }
}

function readLaunch(): Launch | undefined {
  const path = process.env.OMB_SIDECAR_LAUNCH;
  if (!path) return undefined;
  const launch = JSON.parse(readFileSync(path, "utf8")) as Launch;
  if (!launch.command && !launch.url) throw new Error(`${path} names neither a command nor a url`);
  return launch;
}

export default async function ombSidecar(pi: PiApi): Promise<void> {
  const launch = readLaunch();
  if (!launch) return;
  let face: Face | undefined;
  const onNotify: Notify = (method) => {
    if (method === "notifications/tools/list_changed") void face?.refresh().catch(() => undefined);
  };
  const transport: Transport = launch.url ? new HttpTransport(launch, onNotify) : new StdioTransport(launch, onNotify);
  pi.on("session_shutdown", () => transport.close());
  await transport.request("initialize", { protocolVersion: PROTOCOL, capabilities: {}, clientInfo: CLIENT });
  await transport.notify("notifications/initialized");
  if (transport instanceof HttpTransport) void transport.listen();
  face = new Face(pi, transport);
  pi.on("tool_call", (event) => face?.screen(event));
  await face.refresh();
}
