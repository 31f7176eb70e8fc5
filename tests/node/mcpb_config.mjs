#!/usr/bin/env node
// The command a desktop host runs for an unpacked MCPB bundle, resolved by the official
// @anthropic-ai/mcpb library (getMcpConfigForManifest: platform overrides, ${__dirname},
// user_config defaults and values substituted), for typed-mcp's bundle tests.
//
//   node mcpb_config.mjs BUNDLE_DIR USER_CONFIG_JSON
//
// Prints ONE JSON document: the resolved {"command", "args", "env"}, or null when the library
// refuses (a required user_config value is missing). Exit code 2 on a usage error.

import { readFileSync } from 'node:fs';
import { join, sep } from 'node:path';
import { getMcpConfigForManifest } from '@anthropic-ai/mcpb';

const [bundleDir, userConfigJson] = process.argv.slice(2);
if (!bundleDir || userConfigJson === undefined) {
  console.error('usage: node mcpb_config.mjs BUNDLE_DIR USER_CONFIG_JSON');
  process.exit(2);
}
const manifest = JSON.parse(readFileSync(join(bundleDir, 'manifest.json'), 'utf8'));
const config = await getMcpConfigForManifest({
  manifest,
  extensionPath: bundleDir,
  systemDirs: {},
  userConfig: JSON.parse(userConfigJson),
  pathSeparator: sep,
  logger: console,
});
process.stdout.write(JSON.stringify(config ?? null) + '\n');
