// Which values the official TypeScript MCP SDK's own validator (AJV + ajv-formats, as the SDK's
// Client sets it up to check structuredContent) accepts. Reads [{"schema": ..., "value": ...}] as
// JSON from the file named by the first argument; prints [true|false, ...].
import { readFileSync } from 'node:fs';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';

const cases = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const validator = new AjvJsonSchemaValidator();
process.stdout.write(JSON.stringify(cases.map(({ schema, value }) => validator.getValidator(schema)(value).valid)));
