#!/usr/bin/env node
// A deliberately wrong MCP server (stdio, the TypeScript SDK's low-level Server, which does not
// check results against outputSchemas): the negative control for mcp_client.mjs. It proves the
// strict client really reports what tests/e2e/test_ts_client.py asserts never happens with typed-mcp.
// Tools are served in two pages of tools/list, so the client must follow nextCursor and keep
// validating the first page's tools.
//
//   page 1: good_int      outputSchema {result: integer}, returns {result: 7}          -> ok
//           wrong_type    outputSchema {result: integer}, returns {result: "seven"}    -> -32602
//           closed_extra  outputSchema closed object, returns an extra field          -> -32602
//   page 2: no_structured outputSchema {result: integer}, returns text only           -> -32600
//           tool_error    outputSchema {result: integer}, returns isError, no structured -> ok, isError
//           plain         no outputSchema, returns text                               -> ok

import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';

const INT_RESULT = { type: 'object', properties: { result: { type: 'integer' } }, required: ['result'] };
const CLOSED = { type: 'object', properties: { a: { type: 'integer' } }, required: ['a'], additionalProperties: false };
const input = { type: 'object', properties: {} };

const PAGES = [
    [
        { name: 'good_int', inputSchema: input, outputSchema: INT_RESULT },
        { name: 'wrong_type', inputSchema: input, outputSchema: INT_RESULT },
        { name: 'closed_extra', inputSchema: input, outputSchema: CLOSED }
    ],
    [
        { name: 'no_structured', inputSchema: input, outputSchema: INT_RESULT },
        { name: 'tool_error', inputSchema: input, outputSchema: INT_RESULT },
        { name: 'plain', inputSchema: input }
    ]
];

const RESULTS = {
    good_int: { content: [{ type: 'text', text: '{"result": 7}' }], structuredContent: { result: 7 } },
    wrong_type: { content: [{ type: 'text', text: '{"result": "seven"}' }], structuredContent: { result: 'seven' } },
    closed_extra: { content: [{ type: 'text', text: '{"a": 1, "b": 2}' }], structuredContent: { a: 1, b: 2 } },
    no_structured: { content: [{ type: 'text', text: '7' }] },
    tool_error: { content: [{ type: 'text', text: 'upstream failed' }], isError: true },
    plain: { content: [{ type: 'text', text: 'hello' }] }
};

const server = new Server({ name: 'control', version: '0.0.0' }, { capabilities: { tools: {} } });
server.setRequestHandler(ListToolsRequestSchema, async request => {
    const page = request.params?.cursor === 'page-2' ? 1 : 0;
    return page === 0 ? { tools: PAGES[0], nextCursor: 'page-2' } : { tools: PAGES[1] };
});
server.setRequestHandler(CallToolRequestSchema, async request => {
    const result = RESULTS[request.params.name];
    if (!result) return { content: [{ type: 'text', text: `unknown tool ${request.params.name}` }], isError: true };
    return result;
});
await server.connect(new StdioServerTransport());
