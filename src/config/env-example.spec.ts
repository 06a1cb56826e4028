import { readFileSync } from 'fs';
import { join } from 'path';
import { CONFIG_SCHEMA } from './config.schema';

/** STYLE.md: ".env.example lists every variable". This keeps the file and the schema in step. */
describe('.env.example', () => {
  const text = readFileSync(join(__dirname, '..', '..', '.env.example'), 'utf8');
  const documented = new Set(
    text
      .split('\n')
      .map((line) => /^#?\s*([A-Z][A-Z0-9_]*)=/.exec(line)?.[1])
      .filter((name): name is string => !!name),
  );

  it.each(Object.keys(CONFIG_SCHEMA))('documents %s', (name) => {
    expect(documented).toContain(name);
  });

  it('documents nothing the schema does not know', () => {
    const known = new Set(Object.keys(CONFIG_SCHEMA));
    // OpenTelemetry's standard variables are its SDK's, not the schema's: docs/TRACING.md names each one
    const otel = [...documented].filter((n) => n.startsWith('OTEL_'));
    const tracingDoc = readFileSync(join(__dirname, '..', '..', 'docs', 'TRACING.md'), 'utf8');
    expect(otel.filter((n) => !tracingDoc.includes(n))).toEqual([]);
    expect([...documented].filter((n) => !known.has(n) && !otel.includes(n))).toEqual([]);
  });

  it('shows each default', () => {
    for (const [name, spec] of Object.entries(CONFIG_SCHEMA) as [string, { default?: string }][]) {
      if (spec.default === undefined) continue;
      expect(text).toMatch(
        new RegExp(`^#?\\s*${name}=${spec.default.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`, 'm'),
      );
    }
  });
});
