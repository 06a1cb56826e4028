// Compiles src/ twice: CommonJS with declarations (dist/cjs, for require and the types) and ES modules
// (dist/esm, for import in Node and for bundlers and browsers).
const { execFileSync } = require('child_process');
const { mkdirSync, rmSync, writeFileSync } = require('fs');
const { join } = require('path');

const pkg = join(__dirname, '..');
const tsc = require.resolve('typescript/bin/tsc', { paths: [pkg] });
const run = (args) => execFileSync(process.execPath, [tsc, ...args], { cwd: pkg, stdio: 'inherit' });

rmSync(join(pkg, 'dist'), { recursive: true, force: true });
run(['-p', 'tsconfig.build.json']);
run([
  '-p',
  'tsconfig.build.json',
  '--module',
  'ES2022',
  '--moduleResolution',
  'bundler',
  '--declaration',
  'false',
  '--outDir',
  'dist/esm',
]);
mkdirSync(join(pkg, 'dist', 'esm'), { recursive: true });
writeFileSync(
  join(pkg, 'dist', 'esm', 'package.json'),
  `${JSON.stringify({ type: 'module', sideEffects: false }, null, 2)}\n`,
);
