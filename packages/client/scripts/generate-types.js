// Writes src/generated/types.gen.ts: the REST types, generated from the OpenAPI document the built
// service serves at /docs-json (scripts/export-openapi.js at the repository root), by @hey-api/openapi-ts
// (types only: the client's run time needs no generated code), and src/generated/contract/: the
// service's event contract (src/contract/), which the client's realtime types import. The file is committed so a fresh clone
// type-checks and lints before it builds; `npm run build` regenerates it, and test/client checks it is current.
const { execFileSync } = require('child_process');
const {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} = require('fs');
const { tmpdir } = require('os');
const { dirname, join } = require('path');

const pkg = join(__dirname, '..');
const root = join(pkg, '..', '..');
const target = join(pkg, 'src', 'generated', 'types.gen.ts');
/** The service's event contract, and where the client's copy of it goes. */
const contractSource = join(root, 'src', 'contract');
const contractTarget = join(pkg, 'src', 'generated', 'contract');

/**
 * The client's copy of the service's event contract (src/contract/*.ts, self-contained: its files import
 * only each other): file name → text, each headed by where it comes from.
 */
function contractFiles() {
  const out = new Map();
  for (const name of readdirSync(contractSource)
    .filter((f) => f.endsWith('.ts'))
    .sort()) {
    const text = readFileSync(join(contractSource, name), 'utf8');
    out.set(
      name,
      `// The service's event contract, copied from src/contract/${name} by scripts/generate-types.js: edit it there.\n${text}`,
    );
  }
  return out;
}

/** Writes the contract's copy where it differs; answers the files it changed. */
function writeContract() {
  mkdirSync(contractTarget, { recursive: true });
  const files = contractFiles();
  const changed = [];
  for (const [name, text] of files) {
    const file = join(contractTarget, name);
    if (!existsSync(file) || readFileSync(file, 'utf8') !== text) {
      writeFileSync(file, text);
      changed.push(file);
    }
  }
  for (const name of readdirSync(contractTarget)) if (!files.has(name)) rmSync(join(contractTarget, name));
  return changed;
}

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
  for (const file of writeContract()) process.stdout.write(`${file} updated\n`);
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

module.exports = { generate, exportDocument, contractFiles, contractTarget };
if (require.main === module) {
  try {
    main();
  } catch (e) {
    process.stderr.write(`generate-types failed: ${e instanceof Error ? e.message : String(e)}\n`);
    process.exit(1);
  }
}
