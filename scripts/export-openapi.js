// npm run lint:openapi: writes the OpenAPI document the service serves at /docs-json to a file.
// Boots the built application on the embedded in-memory database (no data, no network but loopback),
// fetches /docs-json exactly as a client would, writes it and exits.
const { writeFileSync } = require('fs');
const { join, resolve } = require('path');

const out = resolve(process.argv[2] ?? 'openapi.json');
const root = join(__dirname, '..');
const { createApp } = require(join(root, 'dist', 'app.factory'));
const { loadConfig } = require(join(root, 'dist', 'config', 'config.schema'));

async function main() {
  const config = loadConfig({ SERVICE_DATA_DIR: 'memory://', LOG_LEVEL: 'silent', PORT: '0' });
  const app = await createApp(config, { logs: false });
  try {
    await app.listen(0, '127.0.0.1');
    const { port } = app.getHttpServer().address();
    const res = await fetch(`http://127.0.0.1:${port}/docs-json`);
    if (!res.ok) throw new Error(`/docs-json answered ${res.status}`);
    writeFileSync(out, `${JSON.stringify(await res.json(), null, 2)}\n`);
    process.stdout.write(`OpenAPI document written to ${out}\n`);
  } finally {
    await app.close();
  }
}

main().then(
  () => process.exit(0),
  (err) => {
    process.stderr.write(
      `export-openapi failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
    );
    process.exit(1);
  },
);
