#!/usr/bin/env node
// A strict MCP client for typed-mcp's tests: the official TypeScript SDK's `Client`, of either line.
//
//   node mcp_client.mjs [options] --stdio -- COMMAND [ARGS...]
//   node mcp_client.mjs [options] --url http://127.0.0.1:8000/mcp
//
// Options:
//   --line 1|2        the SDK line (default 1): 1 is @modelcontextprotocol/sdk (draft-07 AJV, the
//                     initialize handshake); 2 is @modelcontextprotocol/client (AJV 2020-12 for a
//                     schema without `$schema`, formats on, each tool's outputSchema compiled on its
//                     first call)
//   --protocol V      line 2 only: the revision to negotiate, 2025-11-25 (the default: the
//                     initialize handshake) or 2026-07-28 (pinned: server/discover, per-request _meta)
//   --calls FILE      JSON array of {"name": ..., "arguments": {...}}, called in order
//   --list-only       only list the tools (no --calls needed)
//   --dump-tools      also put every listed tool definition in the output ("tool_list")
//   --compile-schemas compile every tool's inputSchema and outputSchema with the line's own AJV
//                     set-up (line 1's listing already compiles the outputSchemas: a failure ends
//                     the run); adds "schemas": {"compiled": N, "failures": [{"name", "which", "error"}]}
//   --timeout MS      per-request timeout in milliseconds (default 60000)
//   --header "N: V"   extra HTTP header for --url (repeatable)
//   --elicit ACTION   declare the elicitation capability and answer every elicitation/create with
//                     ACTION (accept, with {"confirm": true}; decline; cancel): a request from the
//                     server (the handshake revisions) or, on 2026-07-28 (line 2), an input request
//                     of an input_required result, which the 2.x client answers and retries itself
//
// Lists ALL tools, then calls each tool with `client.callTool`, which validates `structuredContent`
// against the tool's outputSchema with AJV: a mismatch throws error -32602 (McpError in line 1,
// ProtocolError in line 2; line 2 also throws -32602, before the request, for an outputSchema that
// does not compile), a tool with an outputSchema that returns no structuredContent (and is not an
// error) throws -32600. Every call's outcome is recorded; one failing call never ends the run.
// A call may also be {"resource": uri} (resources/read: the contents' text) or {"templates": true}
// (resources/templates/list: the result as structuredContent); a tool call with "readLinks": true
// also reads every resource_link of its result (resources/read) into "links": [{"uri", "text"}].
// Prints ONE JSON document on stdout:
//   {"line", "protocol", "tools": N, "listed_bytes": B, "results": [{"name", "ok", "isError",
//    "errorCode", "error", "errorType", "structuredContent", "text", "meta"}]}
// ("protocol": the revision the connection negotiated.) The server's stderr goes to this
// process's stderr. The server inherits this process's whole environment (the SDK alone would
// pass only HOME, PATH, ...). Exit code 0 when the run completed (whatever the calls returned), 2
// on a usage error, 1 when connecting or listing failed.

import { readFileSync } from 'node:fs';

const MODERN = '2026-07-28'; // the revision of server/discover (line 2 only)
const LEGACY = '2025-11-25'; // the initialize handshake's latest revision

// What each line is made of, imported only when used. `errorClass`: what callTool throws for a
// JSON-RPC error (with its `code`); `listAll`: every tool, as callTool's outputSchema checks see them.
async function loadLine(line) {
    if (line === 1) {
        const [client, stdio, http, types, ajv] = await Promise.all([
            import('@modelcontextprotocol/sdk/client/index.js'),
            import('@modelcontextprotocol/sdk/client/stdio.js'),
            import('@modelcontextprotocol/sdk/client/streamableHttp.js'),
            import('@modelcontextprotocol/sdk/types.js'),
            import('@modelcontextprotocol/sdk/validation/ajv')
        ]);
        return {
            ElicitRequestSchema: types.ElicitRequestSchema,
            Client: client.Client,
            StdioClientTransport: stdio.StdioClientTransport,
            StreamableHTTPClientTransport: http.StreamableHTTPClientTransport,
            errorClass: types.McpError,
            Validator: ajv.AjvJsonSchemaValidator,
            listAll: listPageByPage
        };
    }
    const [client, stdio, ajv] = await Promise.all([
        import('@modelcontextprotocol/client'),
        import('@modelcontextprotocol/client/stdio'),
        import('@modelcontextprotocol/client/validators/ajv')
    ]);
    return {
        Client: client.Client,
        StdioClientTransport: stdio.StdioClientTransport,
        StreamableHTTPClientTransport: client.StreamableHTTPClientTransport,
        errorClass: client.ProtocolError,
        Validator: ajv.AjvJsonSchemaValidator,
        // Without a cursor, listTools() walks every page and caches the aggregate callTool validates against.
        listAll: async (c, requestOptions) => (await c.listTools(undefined, requestOptions)).tools
    };
}

function usage(message) {
    process.stderr.write(`mcp_client.mjs: ${message}\n`);
    process.stderr.write('usage: node mcp_client.mjs [--line 1|2] [--protocol V] [--calls FILE | --list-only] [--dump-tools] [--timeout MS] (--stdio -- CMD ARGS... | --url URL)\n');
    process.exit(2);
}

function parseArgs(argv) {
    const opts = { line: 1, protocol: null, calls: null, listOnly: false, dumpTools: false, compileSchemas: false, timeout: 60000, url: null, command: null, headers: {}, elicit: null };
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
        else if (arg === '--line') opts.line = Number(value());
        else if (arg === '--protocol') opts.protocol = value();
        else if (arg === '--calls') opts.calls = value();
        else if (arg === '--list-only') opts.listOnly = true;
        else if (arg === '--dump-tools') opts.dumpTools = true;
        else if (arg === '--compile-schemas') opts.compileSchemas = true;
        else if (arg === '--timeout') opts.timeout = Number(value());
        else if (arg === '--elicit') opts.elicit = value();
        else if (arg === '--header') {
            const header = value();
            const colon = header.indexOf(':');
            if (colon < 1) usage(`bad --header ${JSON.stringify(header)}`);
            opts.headers[header.slice(0, colon).trim()] = header.slice(colon + 1).trim();
        } else usage(`unknown argument ${JSON.stringify(arg)}`);
    }
    if (!opts.command === !opts.url) usage('give exactly one of --stdio -- CMD... or --url URL');
    if (!opts.listOnly && !opts.calls) usage('give --calls FILE or --list-only');
    if (opts.line !== 1 && opts.line !== 2) usage('--line must be 1 or 2');
    if (opts.protocol !== null && opts.line !== 2) usage('--protocol needs --line 2 (line 1 only has the initialize handshake)');
    if (opts.protocol !== null && opts.protocol !== LEGACY && opts.protocol !== MODERN) usage(`--protocol must be ${LEGACY} or ${MODERN}`);
    if (opts.elicit !== null && !['accept', 'decline', 'cancel'].includes(opts.elicit)) usage('--elicit takes accept, decline or cancel');
    if (!Number.isFinite(opts.timeout) || opts.timeout <= 0) usage('--timeout must be a positive number of milliseconds');
    return opts;
}

function errorText(error) {
    if (!(error instanceof Error)) return String(error);
    // fetch's "fetch failed" says why only in its cause (a socket closed, a timeout, ...).
    const cause = error.cause instanceof Error ? `${error.cause.code ?? error.cause.name}: ${error.cause.message}` : null;
    return cause ? `${error.message} (${cause})` : error.message;
}

async function listPageByPage(client, requestOptions) {
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

function compileSchemas(tools, Validator) {
    // The validator the Client itself uses by default (line 1: draft-07 AJV; line 2: one engine per
    // declared dialect, 2020-12 without `$schema`; ajv-formats, strict off), one for all tools as there.
    const validator = new Validator();
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
    const sdk = await loadLine(opts.line);
    const transport = opts.command
        ? new sdk.StdioClientTransport({
              command: opts.command[0],
              args: opts.command.slice(1),
              env: { ...process.env },
              stderr: 'inherit'
          })
        : new sdk.StreamableHTTPClientTransport(new URL(opts.url), { requestInit: { headers: opts.headers } });
    // Line 1 has no getter for the negotiated revision; it hands it to the transport's (optional,
    // public) Transport.setProtocolVersion after the handshake: record it there.
    let negotiated = null;
    const setProtocolVersion = transport.setProtocolVersion?.bind(transport);
    transport.setProtocolVersion = version => {
        negotiated = version;
        setProtocolVersion?.(version);
    };
    // Line 2 runs the initialize handshake unless asked for the modern revision (pinned: no fallback).
    let options = opts.protocol === MODERN ? { versionNegotiation: { mode: { pin: MODERN } } } : undefined;
    if (opts.elicit !== null) options = { ...options, capabilities: { elicitation: { form: {} } } };
    const client = new sdk.Client({ name: 'typed-mcp-ts-client', version: '0.0.0' }, options);
    if (opts.elicit !== null) {
        const answer = async () =>
            opts.elicit === 'accept' ? { action: 'accept', content: { confirm: true } } : { action: opts.elicit };
        // Line 1 takes the request's schema; line 2 the method's name.
        client.setRequestHandler(opts.line === 1 ? sdk.ElicitRequestSchema : 'elicitation/create', answer);
    }
    const requestOptions = { timeout: opts.timeout };
    let output;
    try {
        await client.connect(transport, requestOptions);
        const tools = await sdk.listAll(client, requestOptions);
        const results = [];
        for (const call of calls) {
            const entry = { name: call.name, ok: false, isError: false, errorCode: null, error: null, errorType: null, structuredContent: null, text: null };
            try {
                if (call.resource !== undefined) {  // {"resource": uri}: resources/read, its text contents joined
                    const read = await client.readResource({ uri: call.resource }, requestOptions);
                    entry.ok = true;
                    entry.text = read.contents.map(c => c.text ?? '').join('\n');
                    results.push(entry);
                    continue;
                }
                if (call.templates) {  // {"templates": true}: resources/templates/list, as structuredContent
                    entry.structuredContent = await client.listResourceTemplates(undefined, requestOptions);
                    entry.ok = true;
                    results.push(entry);
                    continue;
                }
                const result = await client.callTool({ name: call.name, arguments: call.arguments ?? {} }, undefined, requestOptions);
                entry.ok = true;
                entry.isError = result.isError === true;
                entry.structuredContent = result.structuredContent ?? null;
                entry.meta = result._meta ?? null;
                const texts = (result.content ?? []).filter(c => c.type === 'text').map(c => c.text);
                entry.text = texts.length ? texts.join('\n') : null;
                if (call.readLinks) {
                    entry.links = [];
                    for (const link of (result.content ?? []).filter(c => c.type === 'resource_link')) {
                        const read = await client.readResource({ uri: link.uri }, requestOptions);
                        entry.links.push({ uri: link.uri, text: read.contents.map(c => c.text ?? '').join('\n') });
                    }
                }
            } catch (error) {
                entry.errorType = error?.constructor?.name ?? typeof error;
                entry.errorCode = error instanceof sdk.errorClass ? error.code : null;
                entry.error = errorText(error);
            }
            results.push(entry);
        }
        const protocol = client.getNegotiatedProtocolVersion?.() ?? negotiated;
        output = { line: opts.line, protocol, tools: tools.length, listed_bytes: Buffer.byteLength(JSON.stringify(tools), 'utf8'), results };
        if (opts.dumpTools) output.tool_list = tools;
        if (opts.compileSchemas) output.schemas = compileSchemas(tools, sdk.Validator);
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
