#!/usr/bin/env node
// A strict MCP client for typed-mcp's tests: the official TypeScript SDK's `Client`.
//
//   node mcp_client.mjs [options] --stdio -- COMMAND [ARGS...]
//   node mcp_client.mjs [options] --url http://127.0.0.1:8000/mcp
//
// Options:
//   --calls FILE      JSON array of {"name": ..., "arguments": {...}}, called in order
//   --list-only       only list the tools (no --calls needed)
//   --dump-tools      also put every listed tool definition in the output ("tool_list")
//   --compile-schemas compile every tool's inputSchema and outputSchema with the SDK's own AJV
//                     set-up (listing already compiles the outputSchemas: a failure ends the run);
//                     adds "schemas": {"compiled": N, "failures": [{"name", "which", "error"}]}
//   --timeout MS      per-request timeout in milliseconds (default 60000)
//   --header "N: V"   extra HTTP header for --url (repeatable)
//
// Lists ALL tools (following nextCursor), then calls each tool with `client.callTool`, which
// validates `structuredContent` against the tool's outputSchema with AJV: a mismatch throws
// McpError -32602, a tool with an outputSchema that returns no structuredContent (and is not an
// error) throws McpError -32600. Every call's outcome is recorded; one failing call never ends
// the run. Prints ONE JSON document on stdout:
//   {"tools": N, "listed_bytes": B, "results": [{"name", "ok", "isError", "errorCode", "error",
//    "errorType", "structuredContent", "text"}]}
// The server's stderr goes to this process's stderr. The server inherits this process's whole
// environment (the SDK alone would pass only HOME, PATH, ...). Exit code 0 when the run
// completed (whatever the calls returned), 2 on a usage error, 1 when connecting or listing failed.

import { readFileSync } from 'node:fs';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';

function usage(message) {
    process.stderr.write(`mcp_client.mjs: ${message}\n`);
    process.stderr.write('usage: node mcp_client.mjs [--calls FILE | --list-only] [--dump-tools] [--timeout MS] (--stdio -- CMD ARGS... | --url URL)\n');
    process.exit(2);
}

function parseArgs(argv) {
    const opts = { calls: null, listOnly: false, dumpTools: false, compileSchemas: false, timeout: 60000, url: null, command: null, headers: {} };
    for (let i = 0; i < argv.length; i++) {
        const arg = argv[i];
        const value = () => {
            if (i + 1 >= argv.length) usage(`${arg} needs a value`);
            return argv[++i];
        };
        if (arg === '--stdio') {
            if (argv[i + 1] !== '--') usage('--stdio must be followed by -- COMMAND [ARGS...]');
            opts.command = argv.slice(i + 2);
            if (opts.command.length === 0) usage('--stdio -- needs a command');
            break;
        } else if (arg === '--url') opts.url = value();
        else if (arg === '--calls') opts.calls = value();
        else if (arg === '--list-only') opts.listOnly = true;
        else if (arg === '--dump-tools') opts.dumpTools = true;
        else if (arg === '--compile-schemas') opts.compileSchemas = true;
        else if (arg === '--timeout') opts.timeout = Number(value());
        else if (arg === '--header') {
            const header = value();
            const colon = header.indexOf(':');
            if (colon < 1) usage(`bad --header ${JSON.stringify(header)}`);
            opts.headers[header.slice(0, colon).trim()] = header.slice(colon + 1).trim();
        } else usage(`unknown argument ${JSON.stringify(arg)}`);
    }
    if (!opts.command === !opts.url) usage('give exactly one of --stdio -- CMD... or --url URL');
    if (!opts.listOnly && !opts.calls) usage('give --calls FILE or --list-only');
    if (!Number.isFinite(opts.timeout) || opts.timeout <= 0) usage('--timeout must be a positive number of milliseconds');
    return opts;
}

function errorText(error) {
    if (error instanceof Error) return error.message;
    return String(error);
}

async function listAllTools(client, requestOptions) {
    const tools = [];
    const seen = new Set();
    let cursor;
    do {
        const page = await client.listTools(cursor === undefined ? undefined : { cursor }, requestOptions);
        tools.push(...page.tools);
        cursor = page.nextCursor;
        if (cursor !== undefined) {
            if (seen.has(cursor)) throw new Error(`tools/list repeated the cursor ${JSON.stringify(cursor)}`);
            seen.add(cursor);
        }
    } while (cursor !== undefined);
    // Client.listTools() caches the outputSchema validators of the page it just received and
    // drops the previous page's: re-cache for every tool so callTool validates all of them.
    client.cacheToolMetadata(tools);
    return tools;
}

function compileSchemas(tools) {
    // The validator the Client itself uses by default (draft-07 AJV with ajv-formats, strict off).
    const validator = new AjvJsonSchemaValidator();
    const failures = [];
    let compiled = 0;
    for (const tool of tools) {
        for (const which of ['inputSchema', 'outputSchema']) {
            if (!tool[which]) continue;
            try {
                validator.getValidator(tool[which]);
                compiled++;
            } catch (error) {
                failures.push({ name: tool.name, which, error: errorText(error).slice(0, 500) });
            }
        }
    }
    return { compiled, failures };
}

async function main() {
    const opts = parseArgs(process.argv.slice(2));
    let calls = [];
    if (!opts.listOnly) {
        calls = JSON.parse(readFileSync(opts.calls, 'utf8'));
        if (!Array.isArray(calls)) usage('--calls must hold a JSON array');
    }
    const transport = opts.command
        ? new StdioClientTransport({
              command: opts.command[0],
              args: opts.command.slice(1),
              env: { ...process.env },
              stderr: 'inherit'
          })
        : new StreamableHTTPClientTransport(new URL(opts.url), { requestInit: { headers: opts.headers } });
    const client = new Client({ name: 'typed-mcp-ts-client', version: '0.0.0' });
    const requestOptions = { timeout: opts.timeout };
    let output;
    try {
        await client.connect(transport, requestOptions);
        const tools = await listAllTools(client, requestOptions);
        const results = [];
        for (const call of calls) {
            const entry = { name: call.name, ok: false, isError: false, errorCode: null, error: null, errorType: null, structuredContent: null, text: null };
            try {
                const result = await client.callTool({ name: call.name, arguments: call.arguments ?? {} }, undefined, requestOptions);
                entry.ok = true;
                entry.isError = result.isError === true;
                entry.structuredContent = result.structuredContent ?? null;
                entry.meta = result._meta ?? null;
                const texts = (result.content ?? []).filter(c => c.type === 'text').map(c => c.text);
                entry.text = texts.length ? texts.join('\n') : null;
            } catch (error) {
                entry.errorType = error?.constructor?.name ?? typeof error;
                entry.errorCode = error instanceof McpError ? error.code : null;
                entry.error = errorText(error);
            }
            results.push(entry);
        }
        output = { tools: tools.length, listed_bytes: Buffer.byteLength(JSON.stringify(tools), 'utf8'), results };
        if (opts.dumpTools) output.tool_list = tools;
        if (opts.compileSchemas) output.schemas = compileSchemas(tools);
    } catch (error) {
        process.stderr.write(`mcp_client.mjs: ${error?.constructor?.name ?? 'error'}: ${errorText(error)}\n`);
        process.exitCode = 1;
    } finally {
        try {
            await client.close();
        } catch (error) {
            process.stderr.write(`mcp_client.mjs: close failed: ${errorText(error)}\n`);
        }
    }
    if (output !== undefined) {
        await new Promise(resolve => process.stdout.write(JSON.stringify(output) + '\n', resolve));
    }
}

main().catch(error => {
    process.stderr.write(`mcp_client.mjs: ${errorText(error)}\n`);
    process.exitCode = 1;
});
