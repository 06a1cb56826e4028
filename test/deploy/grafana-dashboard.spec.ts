/**
 * deploy/grafana/chat-service.json: valid JSON Grafana imports, its data source chosen on import (a
 * `${datasource}` variable), and its queries over series the service registers, every chat series shown.
 */
import { readFileSync } from 'fs';
import { join } from 'path';
import { Metrics } from '../../src/ops/metrics';
import { ROOT } from './support';

interface Panel {
  type: string;
  title: string;
  datasource?: { type: string; uid: string };
  targets?: { expr: string; datasource?: { uid: string } }[];
}

const dashboard = JSON.parse(readFileSync(join(ROOT, 'deploy', 'grafana', 'chat-service.json'), 'utf8')) as {
  uid: string;
  panels: Panel[];
  templating: { list: { name: string; type: string; query: unknown }[] };
};
const queried = dashboard.panels.filter((p) => p.type !== 'row');

async function registered(): Promise<Map<string, string>> {
  const all = await new Metrics().registry.getMetricsAsJSON();
  return new Map(all.map((m) => [m.name, String(m.type)]));
}

/** The series a query reads: names followed by a selector. */
function seriesOf(expr: string): string[] {
  return [...expr.matchAll(/([a-zA-Z_:][\w:]*)\{/g)].map((m) => m[1]!);
}

describe('the Grafana dashboard', () => {
  it('takes its Prometheus data source from a ${datasource} variable, in every panel and query', () => {
    const v = dashboard.templating.list.find((x) => x.name === 'datasource');
    expect(v).toMatchObject({ type: 'datasource', query: 'prometheus' });
    expect(queried.length).toBeGreaterThan(10);
    for (const p of queried) {
      expect([p.title, p.datasource]).toEqual([p.title, { type: 'prometheus', uid: '${datasource}' }]);
      for (const t of p.targets ?? [])
        expect([p.title, t.datasource?.uid]).toEqual([p.title, '${datasource}']);
    }
  });

  it('queries only series the service registers, and shows every chat series', async () => {
    const known = await registered();
    const used = new Set<string>();
    for (const p of queried) {
      expect([p.title, (p.targets ?? []).length > 0]).toEqual([p.title, true]);
      for (const t of p.targets!) {
        const series = seriesOf(t.expr);
        expect([p.title, series.length > 0]).toEqual([p.title, true]);
        for (const s of series) {
          const base = s.replace(/_(bucket|count|sum)$/, '');
          const name = known.has(s) ? s : base;
          // a histogram's parts are read as such (its _bucket for quantiles), never as the bare name
          if (name === base && s !== base) expect([s, known.get(base)]).toEqual([s, 'histogram']);
          expect([p.title, s, known.has(name)]).toEqual([p.title, s, true]);
          used.add(name);
        }
      }
    }
    const chat = [...known.keys()].filter((n) => n.startsWith('chat_'));
    expect(chat.filter((n) => !used.has(n))).toEqual([]);
    expect(used).toContain('http_request_duration_seconds');
  });
});
