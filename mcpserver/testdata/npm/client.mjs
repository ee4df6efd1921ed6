// The official MCP TypeScript SDK client against the server at argv[2]: every feature a
// client uses, each a named check. It prints one line per check ("ok <name>" or
// "FAIL <name>: <why>") and exits 1 when any failed. mcpserver's TestTypeScriptSDK runs it.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  LoggingMessageNotificationSchema,
  ResourceUpdatedNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";

const url = new URL(process.argv[2]);
let failed = 0;

async function check(name, fn) {
  try {
    await fn();
    console.log(`ok ${name}`);
  } catch (e) {
    failed++;
    console.log(`FAIL ${name}: ${e?.stack ?? e}`);
  }
}

function expect(cond, why) {
  if (!cond) throw new Error(why);
}

// waitFor resolves with the first value pushed to list that matches, within 20 s.
function waitFor(list, match, what) {
  return new Promise((resolve, reject) => {
    const deadline = setTimeout(() => reject(new Error(`no ${what} within 20 s`)), 20000);
    const poll = setInterval(() => {
      const hit = list.find(match);
      if (hit) {
        clearTimeout(deadline);
        clearInterval(poll);
        resolve(hit);
      }
    }, 20);
  });
}

const client = new Client({ name: "ts-sdk-test", version: "1.0.0" }, { capabilities: { sampling: {}, elicitation: {} } });
const logs = [];
const updates = [];
client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => logs.push(n.params));
client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => updates.push(n.params.uri));
client.setRequestHandler(CreateMessageRequestSchema, async (req) => ({
  role: "assistant",
  model: "ts-test",
  content: { type: "text", text: `echo ${req.params.messages[0].content.text}` },
}));
client.setRequestHandler(ElicitRequestSchema, async () => ({ action: "accept", content: { username: "ts", email: "ts@example.com" } }));
const transport = new StreamableHTTPClientTransport(url);

await check("initialize", async () => {
  await client.connect(transport);
  const info = client.getServerVersion();
  expect(info?.name === "service-mcp-server" && info?.version === "1.0.0", `server info ${JSON.stringify(info)}`);
  const caps = client.getServerCapabilities();
  expect(caps?.tools && caps?.resources?.subscribe && caps?.prompts && caps?.completions && caps?.logging, `capabilities ${JSON.stringify(caps)}`);
  expect(transport.sessionId, "no session id");
});

await check("ping", () => client.ping());

await check("tools/list", async () => {
  const { tools } = await client.listTools();
  const names = tools.map((t) => t.name);
  for (const want of ["echo", "steps", "slow", "test_sampling"]) expect(names.includes(want), `no ${want} in ${names}`);
  const echo = tools.find((t) => t.name === "echo");
  expect(echo.inputSchema.required?.includes("message"), `echo schema ${JSON.stringify(echo.inputSchema)}`);
});

await check("tools/call", async () => {
  const res = await client.callTool({ name: "echo", arguments: { message: "hi", mode: "shout" } });
  expect(!res.isError, `isError: ${JSON.stringify(res)}`);
  expect(JSON.stringify(res.structuredContent) === `{"message":"HI","repeat":1}`, `structuredContent ${JSON.stringify(res.structuredContent)}`);
  expect(res.content[0].type === "text" && res.content[0].text === `{"message":"HI","repeat":1}`, `content ${JSON.stringify(res.content)}`);
});

await check("tools/call invalid arguments", async () => {
  try {
    await client.callTool({ name: "echo", arguments: { mode: "whisper" } });
  } catch (e) {
    expect(e.code === -32003, `code ${e.code}: ${e.message}`);
    return;
  }
  throw new Error("a call with invalid arguments succeeded");
});

await check("progress", async () => {
  const seen = [];
  const res = await client.callTool({ name: "steps", arguments: { steps: 3 } }, undefined, { onprogress: (p) => seen.push(p) });
  expect(!res.isError, `isError: ${JSON.stringify(res)}`);
  expect(JSON.stringify(seen.map((p) => [p.progress, p.total])) === "[[1,3],[2,3],[3,3]]", `progress ${JSON.stringify(seen)}`);
  expect(seen[0].message === "step 1 of 3", `message ${seen[0].message}`);
});

await check("cancellation", async () => {
  const abort = new AbortController();
  setTimeout(() => abort.abort("test"), 300);
  try {
    await client.callTool({ name: "slow", arguments: {} }, undefined, { signal: abort.signal });
  } catch (e) {
    expect(abort.signal.aborted, `failed before the abort: ${e}`);
    return;
  }
  throw new Error("the slow call returned");
});

await check("resources/list and read", async () => {
  const { resources } = await client.listResources();
  const uris = resources.map((r) => r.uri);
  for (const want of ["service://code/analysis", "service://infrastructure/cloud", "service://system/health"]) {
    expect(uris.includes(want), `no ${want} in ${uris}`);
  }
  const { contents } = await client.readResource({ uri: "service://system/health" });
  expect(contents[0].mimeType === "application/json" && JSON.parse(contents[0].text).status === "ok", `health ${JSON.stringify(contents)}`);
});

await check("resources/subscribe", async () => {
  await client.subscribeResource({ uri: "service://code/analysis" });
  // The test pokes the analysis until the notification arrives on the session's GET stream.
  await waitFor(updates, (u) => u === "service://code/analysis", "notifications/resources/updated");
  const { contents } = await client.readResource({ uri: "service://code/analysis" });
  expect(JSON.parse(contents[0].text).files === 2, `document ${contents[0].text}`);
  await client.unsubscribeResource({ uri: "service://code/analysis" });
});

await check("prompts/list and get", async () => {
  const { prompts } = await client.listPrompts();
  const echo = prompts.find((p) => p.name === "echo");
  expect(echo?.arguments?.some((a) => a.name === "message" && a.required), `echo prompt ${JSON.stringify(echo)}`);
  const got = await client.getPrompt({ name: "echo", arguments: { message: "x" } });
  expect(got.messages[0].role === "user" && got.messages[0].content.text.includes("echo"), `messages ${JSON.stringify(got.messages)}`);
});

await check("completion/complete", async () => {
  const { completion } = await client.complete({ ref: { type: "ref/prompt", name: "echo" }, argument: { name: "mode", value: "s" } });
  expect(JSON.stringify(completion.values) === `["shout"]`, `values ${JSON.stringify(completion.values)}`);
});

await check("logging", async () => {
  await client.setLoggingLevel("debug");
  await client.callTool({ name: "echo", arguments: { message: "log me" } });
  // The log of this call, not the error log of the refused echo call in "tools/call invalid arguments"
  // above, which the session's stream may deliver before or after this one.
  const m = await waitFor(logs, (l) => l.data?.tool === "echo" && l.data?.code === undefined, "notifications/message");
  expect(m.level === "info" && m.logger === "service-mcp-server", `log ${JSON.stringify(m)}`);
});

await check("sampling", async () => {
  const res = await client.callTool({ name: "test_sampling", arguments: { prompt: "2+2?" } });
  expect(res.content[0].text === "LLM response: echo 2+2?", `result ${JSON.stringify(res)}`);
});

await check("elicitation", async () => {
  const res = await client.callTool({ name: "test_elicitation", arguments: { message: "who?" } });
  expect(res.content[0].text === `User response: action=accept, content={"username":"ts","email":"ts@example.com"}`, `result ${JSON.stringify(res)}`);
});

await check("session end", async () => {
  await transport.terminateSession();
  expect(transport.sessionId === undefined, `session ${transport.sessionId}`);
});

await client.close();
process.exit(failed ? 1 : 0);
