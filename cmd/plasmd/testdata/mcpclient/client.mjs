// client.mjs drives plasmd with the TypeScript MCP SDK's Client — a real
// MCP client plasmd's authors did not write — and prints what it saw as
// one JSON object on stdout. cmd/plasmd's TestTypeScriptSDKClient writes
// the scenario (JSON) to stdin and compares the rows with what the demo
// backend holds; this script only asks and records, it judges nothing.
//
// Scenario fields: transport "stdio" (command, args) or "http" (url);
// one_shot: a new client, so a new connection (over stdio a new plasmd
// process), for every request; intent, seeds; get, query (programs run
// with force); lists (programs dry-run with plasm, run with the
// plan_commit_ref, then paged with page(handle) to the end); bad (a
// program that does not parse); timeout_ms per request.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const scenario = JSON.parse(await readStdin());
const timeout = scenario.timeout_ms;
const report = { connections: 0 };

async function readStdin() {
  let text = "";
  for await (const chunk of process.stdin) text += chunk;
  return text;
}

function transport() {
  if (scenario.transport === "stdio") {
    return new StdioClientTransport({ command: scenario.command, args: scenario.args, stderr: "inherit" });
  }
  return new StreamableHTTPClientTransport(new URL(scenario.url));
}

async function connect() {
  const t = transport();
  const client = new Client({ name: "plasmd-ts-sdk-test", version: "1" });
  await client.connect(t, { timeout });
  report.connections++;
  return { client, t };
}

// close ends the connection as a client should: over HTTP it deletes
// the MCP session first (the SDK's terminateSession), then closes.
async function close({ client, t }) {
  if (t instanceof StreamableHTTPClientTransport) await t.terminateSession();
  await client.close();
}

let shared = scenario.one_shot ? null : await connect();

// use runs fn with a client: the shared one, or a fresh one that is
// closed afterwards (one-shot).
async function use(fn) {
  if (shared) return fn(shared.client);
  const conn = await connect();
  try {
    return await fn(conn.client);
  } finally {
    await close(conn);
  }
}

// call returns a tool result reduced to what the test judges. A tool
// error is a result (isError), never an exception; an exception here is a
// transport or protocol failure and ends the script with a non-zero code.
async function call(name, args) {
  const res = await use((c) => c.callTool({ name, arguments: args }, undefined, { timeout }));
  const structured = res.structuredContent ?? {};
  return {
    is_error: res.isError === true,
    text: res.content.filter((c) => c.type === "text").map((c) => c.text).join(""),
    plasm: res._meta?.plasm ?? structured._meta?.plasm ?? {},
    results: structured.results ?? [],
    error: structured.error ?? null,
  };
}

async function read(uri) {
  const res = await use((c) => c.readResource({ uri }, { timeout }));
  return res.contents.map((c) => c.text ?? "").join("");
}

const init = await use(async (c) => ({
  server: c.getServerVersion(),
  capabilities: c.getServerCapabilities(),
  tools: (await c.listTools(undefined, { timeout })).tools,
  resources: (await c.listResources(undefined, { timeout })).resources,
  templates: (await c.listResourceTemplates(undefined, { timeout })).resourceTemplates,
}));
report.server = init.server;
report.capabilities = init.capabilities;
report.tools = init.tools.map((t) => ({ name: t.name, title: t.title, annotations: t.annotations, output_schema: !!t.outputSchema }));
report.resources = init.resources.map((r) => r.uri);
report.resource_templates = init.templates.map((r) => r.uriTemplate);

report.context = await call("plasm_context", { intent: scenario.intent, seeds: scenario.seeds });
// A one-shot client can only name the session by its handle: sN names a
// session on one connection.
const handle = report.context.plasm.session_handle;
const ref = scenario.one_shot ? handle : report.context.plasm.logical_session_ref;
report.teaching = await read(`plasm://session/${ref}/teaching`);

report.get = await call("plasm_run", { logical_session_ref: ref, program: scenario.get });
const runURI = scenario.one_shot ? report.get.plasm.canonical_uri : report.get.plasm.run_uri;
report.get_resource = runURI ? JSON.parse(await read(runURI)) : null;
report.query = await call("plasm_run", { logical_session_ref: ref, program: scenario.query, force: true });

report.lists = [];
for (const program of scenario.lists) {
  const plan = await call("plasm", { logical_session_ref: ref, program });
  const pages = [await call("plasm_run", { logical_session_ref: ref, program, plan_commit_ref: plan.plasm.plan_commit_ref })];
  // Bounded: a server that hands out handles forever fails the test
  // instead of hanging it.
  for (let i = 0; i < 100; i++) {
    const paging = pages.at(-1).plasm.paging;
    if (!paging?.length) break;
    pages.push(await call("plasm_run", { logical_session_ref: ref, program: `page(${paging[0].handle})`, force: true }));
  }
  report.lists.push({ program, plan, pages });
}

report.bad = await call("plasm_run", { logical_session_ref: ref, program: scenario.bad });
// The same connection still answers after a tool error.
report.after_bad = await call("plasm_run", { logical_session_ref: ref, program: scenario.get });

if (shared) await close(shared);
process.stdout.write(JSON.stringify(report) + "\n");
