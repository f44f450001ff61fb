// The MCP client of tests/mcp: the official TypeScript SDK drives `envdoctor mcp` over stdio.
//
// Usage: node drive.mjs PLAN.json RESULT.json
// PLAN: {"command": "/path/envdoctor", "args": ["mcp"], "env": {...}, "calls": [{"name", "arguments"}]}
// RESULT: {"protocolVersion", "serverVersion", "capabilities", "instructions", "tools",
//          "calls": [{"name", "result" | "error", "schemaErrors"}]}
//
// The SDK's client negotiates the protocol version, lists the tools, and validates each
// structuredContent against its tool's outputSchema itself (Ajv, draft-07 rules; a result that
// fails is thrown as an error, recorded here). Each result is validated again with Ajv's 2020-12
// build, MCP's default dialect, the one the schemas are written in. The C++ test asserts on the
// result file.
import { readFileSync, writeFileSync } from 'node:fs';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import Ajv2020 from 'ajv/dist/2020.js';

const plan = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const transport = new StdioClientTransport({
  command: plan.command,
  args: plan.args,
  env: { ...process.env, ...(plan.env ?? {}) },
  stderr: 'inherit',
});
let protocolVersion = null;
transport.setProtocolVersion = (v) => { protocolVersion = v; };
const client = new Client({ name: 'envdoctor-test-client', version: '1.0.0' });
await client.connect(transport);

const { tools } = await client.listTools();
// One Ajv per tool: several tools share a schema, and so its $id.
const validators = new Map(tools.map((t) => [t.name, new Ajv2020({ strict: false, allErrors: true }).compile(t.outputSchema)]));
const calls = [];
for (const call of plan.calls) {
  const entry = { name: call.name };
  try {
    entry.result = await client.callTool({ name: call.name, arguments: call.arguments ?? {} });
    const validate = validators.get(call.name);
    if (entry.result.structuredContent !== undefined && validate && !validate(entry.result.structuredContent))
      entry.schemaErrors = JSON.stringify(validate.errors);
  } catch (e) {
    entry.error = String(e?.message ?? e);
  }
  calls.push(entry);
}
await client.close();
writeFileSync(process.argv[3], JSON.stringify({
  protocolVersion,
  serverVersion: client.getServerVersion(),
  capabilities: client.getServerCapabilities(),
  instructions: client.getInstructions(),
  tools,
  calls,
}));
