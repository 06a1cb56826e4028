// The demo chat app (demo/) into dist/public/demo, served at /demo by src/demo/demo-static.ts: one
// esbuild bundle of its TypeScript (the @chat-service/client package bundled in from its sources, so no
// CDN and no separate client build), one stylesheet, and index.html naming their content-hashed files.
const { build } = require('esbuild');
const { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } = require('fs');
const { basename, join } = require('path');

const root = join(__dirname, '..');
const DEFAULT_OUTDIR = join(root, 'dist', 'public', 'demo');

async function buildDemo(outdir = DEFAULT_OUTDIR) {
  rmSync(outdir, { recursive: true, force: true });
  mkdirSync(outdir, { recursive: true });
  const clientSource = join(root, 'packages', 'client', 'src', 'index.ts');
  const result = await build({
    entryPoints: {
      app: join(root, 'demo', 'src', 'main.ts'),
      styles: join(root, 'demo', 'src', 'styles.css'),
    },
    outdir,
    bundle: true,
    minify: true,
    sourcemap: true,
    format: 'iife',
    platform: 'browser',
    target: ['es2020', 'chrome100', 'firefox100', 'safari15'],
    entryNames: '[name]-[hash]',
    alias: existsSync(clientSource) ? { '@chat-service/client': clientSource } : {},
    metafile: true,
    logLevel: 'warning',
  });
  const outputs = Object.keys(result.metafile.outputs).map((p) => basename(p));
  const js = outputs.find((f) => /^app-.*\.js$/.test(f));
  const css = outputs.find((f) => /^styles-.*\.css$/.test(f));
  if (!js || !css) throw new Error(`demo build: missing outputs in ${outputs.join(', ')}`);
  const html = readFileSync(join(root, 'demo', 'index.html'), 'utf8')
    .replace('%STYLES%', `./${css}`)
    .replace('%SCRIPT%', `./${js}`);
  writeFileSync(join(outdir, 'index.html'), html);
  return { outdir, js, css };
}

module.exports = { buildDemo };

if (require.main === module) {
  buildDemo(process.argv[2]).then(
    ({ outdir, js, css }) => process.stdout.write(`demo app: ${outdir} (${js}, ${css})\n`),
    (err) => {
      process.stderr.write(`demo build failed: ${err instanceof Error ? err.message : String(err)}\n`);
      process.exit(1);
    },
  );
}
