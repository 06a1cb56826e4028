// The import graph of src/ (madge, type imports included): no import cycle between modules, and at
// most MAX_MUTUAL pairs of top-level folders that import each other (two folders that depend on each
// other are one piece in two places: the layers of docs/ARCHITECTURE.md say which way each goes).
// `node scripts/check-imports.js` prints the cycles and the mutual pairs with the imports behind them.
const { join } = require('path');
const madge = require('madge');

const MAX_MUTUAL = Number(process.env.MAX_MUTUAL ?? 3);
const root = join(__dirname, '..');

async function main() {
  const graph = await madge(join(root, 'src'), {
    fileExtensions: ['ts'],
    tsConfig: join(root, 'tsconfig.json'),
    excludeRegExp: [/\.spec\.ts$/],
    detectiveOptions: { ts: { skipTypeImports: false }, tsx: { skipTypeImports: false } },
  });
  const cycles = graph.circular();
  const folderOf = (file) => (file.includes('/') ? file.slice(0, file.indexOf('/')) : null);
  /** "a>b" → the imports from folder a into folder b */
  const edges = new Map();
  for (const [from, deps] of Object.entries(graph.obj())) {
    const a = folderOf(from);
    for (const to of deps) {
      const b = folderOf(to);
      if (!a || !b || a === b) continue;
      const key = `${a}>${b}`;
      if (!edges.has(key)) edges.set(key, []);
      edges.get(key).push(`${from} -> ${to}`);
    }
  }
  const mutual = [];
  for (const key of edges.keys()) {
    const [a, b] = key.split('>');
    if (a < b && edges.has(`${b}>${a}`)) mutual.push([a, b]);
  }
  for (const c of cycles) console.log(`cycle: ${c.join(' > ')}`);
  for (const [a, b] of mutual) {
    console.log(`${a} <-> ${b}`);
    for (const line of [...edges.get(`${a}>${b}`), ...edges.get(`${b}>${a}`)]) console.log(`    ${line}`);
  }
  const files = Object.keys(graph.obj()).length;
  console.log(
    `${files} modules: ${cycles.length} import cycles, ${mutual.length} pairs of folders importing each other (at most ${MAX_MUTUAL})`,
  );
  if (cycles.length || mutual.length > MAX_MUTUAL) process.exit(1);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
