// Which values the official TypeScript MCP SDK's own validator (AJV + ajv-formats, as the SDK's
// Client sets it up to check structuredContent) accepts, for SDK line 1 (draft-07) or 2 (2020-12
// for a schema without `$schema`). Usage: node ajv_check.mjs LINE CASES.json, where CASES.json holds
// [{"schema": ..., "value": ...}]; prints [true|false, ...]. A schema that does not compile
// ends the run (exit 1).
import { readFileSync } from 'node:fs';

const [line, file] = process.argv.slice(2);
const module = line === '2' ? '@modelcontextprotocol/client/validators/ajv' : '@modelcontextprotocol/sdk/validation/ajv';
const { AjvJsonSchemaValidator } = await import(module);
const cases = JSON.parse(readFileSync(file, 'utf8'));
const validator = new AjvJsonSchemaValidator();
process.stdout.write(JSON.stringify(cases.map(({ schema, value }) => validator.getValidator(schema)(value).valid)));
