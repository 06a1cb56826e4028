// Writes src/generated/types.gen.ts: the REST types, generated from the OpenAPI document the built
// service serves at /docs-json (scripts/export-openapi.js at the repository root), by @hey-api/openapi-ts
// (types only: the client's run time needs no generated code). The file is committed so a fresh clone
// type-checks and lints before it builds; `npm run build` regenerates it, and test/client checks it is current.
const { execFileSync } = require('child_process');
const { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } = require('fs');
const { tmpdir } = require('os');
const { dirname, join } = require('path');

const pkg = join(__dirname, '..');
const root = join(pkg, '..', '..');
const target = join(pkg, 'src', 'generated', 'types.gen.ts');

/** Generates the types from an OpenAPI document (a file path) and answers the text of types.gen.ts. */
function generate(documentPath) {
  const dir = mkdtempSync(join(tmpdir(), 'chat-client-types-'));
  try {
    writeFileSync(join(dir, 'openapi.json'), readFileSync(documentPath));
    const bin = join(
      dirname(require.resolve('@hey-api/openapi-ts/package.json', { paths: [root] })),
      'bin',
      'run.js',
    );
    // the generator reads "./file" as a path ("file" alone reads as a registry shorthand)
    execFileSync(
      process.execPath,
      [bin, '-i', './openapi.json', '-o', './out', '-p', '@hey-api/typescript'],
      {
        cwd: dir,
        stdio: ['ignore', 'ignore', 'inherit'],
      },
    );
    return readFileSync(join(dir, 'out', 'types.gen.ts'), 'utf8');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Exports the built service's document into a temp file and answers its path (and a cleanup). */
function exportDocument() {
  if (!existsSync(join(root, 'dist', 'app.factory.js')))
    throw new Error(
      'the service is not built: run `npm run build` at the repository root (it builds the service first)',
    );
  const dir = mkdtempSync(join(tmpdir(), 'chat-client-openapi-'));
  const file = join(dir, 'openapi.json');
  execFileSync(process.execPath, [join(root, 'scripts', 'export-openapi.js'), file], {
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  return { file, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

function main() {
  const doc = process.argv[2] ? { file: process.argv[2], cleanup: () => undefined } : exportDocument();
  try {
    const text = generate(doc.file);
    const current = existsSync(target) ? readFileSync(target, 'utf8') : '';
    if (text !== current) {
      writeFileSync(target, text);
      process.stdout.write(`${target} updated\n`);
    } else process.stdout.write(`${target} is current\n`);
  } finally {
    doc.cleanup();
  }
}

module.exports = { generate, exportDocument };
if (require.main === module) {
  try {
    main();
  } catch (e) {
    process.stderr.write(`generate-types failed: ${e instanceof Error ? e.message : String(e)}\n`);
    process.exit(1);
  }
}
