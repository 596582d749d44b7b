// A Vercel AI SDK agent whose workspace is satchel.
//
//   npm install ai @ai-sdk/mcp @ai-sdk/anthropic
//   SATCHEL_DB=/abs/path/satchel.db SATCHEL_DIR=/abs/path/project npx tsx vercel_ai_sdk.ts
//
// The MCP client starts `satchel serve` over stdio; its tools become AI SDK
// tools that generateText calls until the model is done.
import { createMCPClient } from '@ai-sdk/mcp';
import { Experimental_StdioMCPTransport } from '@ai-sdk/mcp/mcp-stdio';
import { anthropic } from '@ai-sdk/anthropic';
import { generateText, stepCountIs } from 'ai';
import path from 'node:path';

const db = process.env.SATCHEL_DB ?? path.resolve('satchel.db');
const dir = process.env.SATCHEL_DIR ?? path.resolve('.');

// Absolute --db and --dir: the server's working directory is not ours to choose.
const satchel = await createMCPClient({
  transport: new Experimental_StdioMCPTransport({
    command: 'satchel',
    args: ['serve', '--db', db, '--dir', dir, '--agent', 'research', '--scope', 'acme'],
  }),
});
// Over HTTP instead (satchel serve --http 127.0.0.1:8080, a token from satchel token create):
// const satchel = await createMCPClient({
//   transport: { type: 'http', url: 'http://127.0.0.1:8080/mcp', headers: { Authorization: `Bearer ${process.env.SATCHEL_TOKEN}` } },
// });

try {
  const tools = await satchel.tools();
  const { text } = await generateText({
    model: anthropic('claude-sonnet-4-6'),
    tools,
    stopWhen: stepCountIs(10),
    system: 'Keep your notes in the workspace (read_file, write_file, edit_file); checkpoint before risky edits.',
    prompt: "Write a plan for researching acme's pricing to notes/plan.md, then show its history.",
  });
  console.log(text);
} finally {
  await satchel.close();
}
