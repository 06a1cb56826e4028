/**
 * The Helm chart (deploy/helm/chat-service), rendered by Helm 4 with the default values, the
 * production-like example and a chart-managed Secret: every manifest valid against the Kubernetes
 * schemas, and the properties operators rely on (probes, drain, security, roles, hooks, secrets).
 */
import { readFileSync } from 'fs';
import { join } from 'path';
import { parse } from 'yaml';
import { CONFIG_SCHEMA } from '../../src/config/config.schema';
import { Metrics } from '../../src/ops/metrics';
import {
  CHART,
  find,
  GATEWAY_VALUES,
  helm,
  Manifest,
  parseManifests,
  PRODUCTION_VALUES,
  render,
  renderError,
  ROOT,
  validateManifests,
} from './support';

const API = 'chat-chat-service-api';
const WORKER = 'chat-chat-service-worker';
const SECRET_VARS = [
  'DATABASE_URL',
  'REDIS_URL',
  'SERVICE_ENCRYPTION_KEY',
  'SERVICE_ADMIN_TOKEN',
  'SERVICE_BOOTSTRAP_API_KEY',
  'SERVICE_BOOTSTRAP_API_SECRET',
  'SERVICE_S3_ACCESS_KEY_ID',
  'SERVICE_S3_SECRET_ACCESS_KEY',
];
const CHART_SET_VARS = ['PORT', 'SERVICE_ROLE', 'SERVICE_DATA_DIR', 'SERVICE_PUSH_SERVICE_ACCOUNT_FILE'];
const ENCRYPTION_KEY = Buffer.alloc(32, 7).toString('base64');
/** Chart-managed Secret, push on, no worker Deployment (the API runs everything), a shared volume. */
const MANAGED = {
  secrets: {
    values: {
      DATABASE_URL: 'postgresql://chat:pw@db:5432/chat',
      REDIS_URL: 'redis://redis:6379',
      SERVICE_ENCRYPTION_KEY: ENCRYPTION_KEY,
      SERVICE_ADMIN_TOKEN: 'admin-token-value',
    },
  },
  push: { enabled: true, serviceAccountJson: '{"type":"service_account"}' },
  worker: { enabled: false },
  persistence: { enabled: true },
};

/** The service's own drain deadline (src/main.ts), which the grace period must exceed. */
const SHUTDOWN_DEADLINE_MS = Number(
  /const SHUTDOWN_DEADLINE_MS = ([\d_]+);/
    .exec(readFileSync(join(ROOT, 'src/main.ts'), 'utf8'))![1]!
    .replace(/_/g, ''),
);

function podSpec(m: Manifest): any {
  return m.spec.template.spec;
}
function container(m: Manifest): any {
  return podSpec(m).containers[0];
}
function env(m: Manifest): Map<string, any> {
  return new Map((container(m).env as any[]).map((e) => [e.name as string, e]));
}
function ofKind(manifests: Manifest[], kind: string): Manifest[] {
  return manifests.filter((m) => m.kind === kind);
}

let defaults: Manifest[];
let production: Manifest[];
let managed: Manifest[];
let gatewayed: Manifest[];

beforeAll(() => {
  defaults = render();
  production = render({ values: [PRODUCTION_VALUES] });
  managed = render({ with: MANAGED });
  gatewayed = render({ values: [PRODUCTION_VALUES, GATEWAY_VALUES] });
});

describe('helm lint --strict', () => {
  it.each([
    ['the default values', []],
    ['the production example', ['--values', PRODUCTION_VALUES]],
    [
      'the Gateway example (HTTPRoute, NetworkPolicies, sockets HPA)',
      ['--values', PRODUCTION_VALUES, '--values', GATEWAY_VALUES],
    ],
  ])('passes with %s', (_name, args) => {
    expect(helm(['lint', '--strict', CHART, ...args])).toMatch(/1 chart\(s\) linted, 0 chart\(s\) failed/);
  });
});

describe('every rendered manifest is valid against the Kubernetes schemas', () => {
  it.each([
    ['default values', () => defaults],
    ['production example', () => production],
    ['chart-managed Secret, no workers, persistence', () => managed],
    ['Gateway example: HTTPRoute, NetworkPolicies, sockets HPA', () => gatewayed],
  ])('%s', (_name, manifests) => {
    expect(manifests().length).toBeGreaterThan(5);
    expect(validateManifests(manifests())).toEqual([]);
  });

  it('and the validation does catch a wrong field', () => {
    const broken = JSON.parse(JSON.stringify(find(defaults, 'Deployment', API))) as Manifest;
    container(broken).readinesProbe = container(broken).readinessProbe;
    broken.spec.replicas = 'two';
    const problems = validateManifests([broken]);
    expect(problems.join('\n')).toMatch(/readinesProbe \(not a field of ApiCoreV1Container\)/);
    expect(problems.join('\n')).toMatch(/replicas must be integer/);
  });
});

describe('API and worker Deployments', () => {
  it('run the same image with SERVICE_ROLE api and worker', () => {
    const api = find(defaults, 'Deployment', API);
    const worker = find(defaults, 'Deployment', WORKER);
    expect(env(api).get('SERVICE_ROLE').value).toBe('api');
    expect(env(worker).get('SERVICE_ROLE').value).toBe('worker');
    expect(container(api).image).toBe(container(worker).image);
    expect(container(api).image).toMatch(/:0\.1\.0$/);
    expect(api.spec.selector.matchLabels['app.kubernetes.io/component']).toBe('api');
    expect(worker.spec.selector.matchLabels['app.kubernetes.io/component']).toBe('worker');
  });

  it('without the worker Deployment the API pods run everything (SERVICE_ROLE=all)', () => {
    expect(ofKind(managed, 'Deployment').map((d) => d.metadata.name)).toEqual([API]);
    expect(env(find(managed, 'Deployment', API)).get('SERVICE_ROLE').value).toBe('all');
  });

  it.each([API, WORKER])('%s: startup and liveness probes on /healthz, readiness on /readyz', (name) => {
    const c = container(find(defaults, 'Deployment', name));
    expect(c.startupProbe.httpGet).toEqual({ path: '/healthz', port: 'http' });
    expect(c.livenessProbe.httpGet).toEqual({ path: '/healthz', port: 'http' });
    expect(c.readinessProbe.httpGet).toEqual({ path: '/readyz', port: 'http' });
    expect(c.ports).toEqual([{ name: 'http', containerPort: 3000, protocol: 'TCP' }]);
    expect(env(find(defaults, 'Deployment', name)).get('PORT').value).toBe('3000');
  });

  it('the API keeps serving through a preStop pause, then drains within the grace period', () => {
    const api = find(defaults, 'Deployment', API);
    const sleep = container(api).lifecycle.preStop.exec.command as string[];
    expect(sleep[0]).toBe('sleep');
    const pauseMs = Number(sleep[1]) * 1000;
    expect(pauseMs).toBeGreaterThan(0);
    expect(podSpec(api).terminationGracePeriodSeconds * 1000).toBeGreaterThan(pauseMs + SHUTDOWN_DEADLINE_MS);
    expect(api.spec.strategy.rollingUpdate.maxUnavailable).toBe(0);
    const worker = find(defaults, 'Deployment', WORKER);
    expect(podSpec(worker).terminationGracePeriodSeconds * 1000).toBeGreaterThan(SHUTDOWN_DEADLINE_MS);
  });

  it('refuses a grace period that does not cover the pause plus the drain', () => {
    expect(SHUTDOWN_DEADLINE_MS).toBeLessThanOrEqual(10_000); // the chart's floor assumes a 10 s drain
    expect(
      renderError({ set: ['api.preStopSleepSeconds=5', 'api.terminationGracePeriodSeconds=15'] }),
    ).toMatch(
      /api.terminationGracePeriodSeconds \(15\) must exceed api.preStopSleepSeconds plus config.SERVICE_SHUTDOWN_DELAY_SECONDS plus the service's 10 s drain deadline \(15\)/,
    );
    const ok = render({ set: ['api.preStopSleepSeconds=5', 'api.terminationGracePeriodSeconds=16'] });
    expect(podSpec(find(ok, 'Deployment', API)).terminationGracePeriodSeconds).toBe(16);
    // the service's own pause after SIGTERM counts too
    expect(
      renderError({
        set: [
          'api.preStopSleepSeconds=5',
          'api.terminationGracePeriodSeconds=16',
          'config.SERVICE_SHUTDOWN_DELAY_SECONDS=3',
        ],
      }),
    ).toMatch(/api.terminationGracePeriodSeconds \(16\) must exceed .* \(18\)/);
  });

  it.each([
    ['default', () => defaults],
    ['production', () => production],
  ])('%s: restricted security context, read-only root with an emptyDir on /tmp', (_name, manifests) => {
    const pods = [
      ...ofKind(manifests(), 'Deployment').map(podSpec),
      ...ofKind(manifests(), 'Job').map(podSpec),
      ...ofKind(manifests(), 'Pod').map((p) => p.spec),
    ];
    expect(pods.length).toBeGreaterThanOrEqual(3);
    for (const pod of pods) {
      expect(pod.securityContext).toMatchObject({
        runAsNonRoot: true,
        seccompProfile: { type: 'RuntimeDefault' },
      });
      expect(pod.securityContext.runAsUser).toBeGreaterThan(0);
      expect(pod.automountServiceAccountToken).toBe(false);
      for (const c of pod.containers) {
        expect(c.securityContext).toMatchObject({
          allowPrivilegeEscalation: false,
          readOnlyRootFilesystem: true,
          runAsNonRoot: true,
          capabilities: { drop: ['ALL'] },
          seccompProfile: { type: 'RuntimeDefault' },
        });
        expect(c.resources.limits.memory).toBeDefined();
        expect(c.resources.requests.cpu).toBeDefined();
        const tmp = (c.volumeMounts ?? []).find((m: any) => m.mountPath === '/tmp');
        if (pod.volumes) {
          expect(pod.volumes.find((v: any) => v.name === tmp.name).emptyDir).toBeDefined();
        }
      }
    }
  });

  it('spreads pods over zones and nodes, per component', () => {
    const spread = podSpec(find(defaults, 'Deployment', WORKER)).topologySpreadConstraints as any[];
    expect(spread.map((s) => s.topologyKey)).toEqual([
      'topology.kubernetes.io/zone',
      'kubernetes.io/hostname',
    ]);
    for (const s of spread) {
      expect(s.labelSelector.matchLabels['app.kubernetes.io/component']).toBe('worker');
      expect(s.whenUnsatisfiable).toBe('ScheduleAnyway');
    }
  });

  it('takes configuration from values, as the service reads it', () => {
    const e = env(find(production, 'Deployment', API));
    expect(e.get('SERVICE_STORAGE_DRIVER').value).toBe('s3');
    expect(e.get('SERVICE_EDIT_WINDOW_SECONDS').value).toBe('900');
    expect(e.get('SERVICE_BASE_URL').value).toBe('https://chat.example.com');
    const big = env(
      find(render({ set: ['config.SERVICE_MAX_ATTACHMENT_SIZE_BYTES=104857600'] }), 'Deployment', API),
    );
    expect(big.get('SERVICE_MAX_ATTACHMENT_SIZE_BYTES').value).toBe('104857600'); // not 1.048576e+08
    expect(env(find(defaults, 'Deployment', API)).has('SERVICE_S3_BUCKET')).toBe(false); // empty = unset
  });
});

describe('secrets', () => {
  it('with existingSecret: no Secret is created and nothing secret is inlined', () => {
    expect(ofKind(production, 'Secret')).toEqual([]);
    for (const m of [...ofKind(production, 'Deployment'), ...ofKind(production, 'Job')]) {
      const e = env(m);
      for (const name of SECRET_VARS) {
        if (!e.has(name)) continue;
        expect(e.get(name).value).toBeUndefined();
        expect(e.get(name).valueFrom.secretKeyRef.name).toMatch(/^(chat-service|chat-db-app)$/);
      }
      expect(e.get('DATABASE_URL').valueFrom.secretKeyRef).toEqual({ name: 'chat-db-app', key: 'uri' });
    }
    const api = env(find(production, 'Deployment', API));
    expect(api.get('SERVICE_ENCRYPTION_KEY').valueFrom.secretKeyRef).toEqual({
      name: 'chat-service',
      key: 'SERVICE_ENCRYPTION_KEY',
    });
    expect(api.get('SERVICE_ADMIN_TOKEN').valueFrom.secretKeyRef).toEqual({
      name: 'chat-service',
      key: 'SERVICE_ADMIN_TOKEN',
      optional: true,
    });
  });

  it('refuses secret values next to an existingSecret', () => {
    expect(
      renderError({ values: [PRODUCTION_VALUES], set: ['secrets.values.REDIS_URL=redis://x:6379'] }),
    ).toMatch(/secrets.values.REDIS_URL is set but secrets.existingSecret \(chat-service\) is used/);
  });

  it('created by the chart: the values in its Secret, referenced (not inlined) by the pods', () => {
    const secret = find(managed, 'Secret', 'chat-chat-service');
    const data = Object.fromEntries(
      Object.entries(secret.data as Record<string, string>).map(([k, v]) => [
        k,
        Buffer.from(v, 'base64').toString(),
      ]),
    );
    expect(data).toEqual({
      DATABASE_URL: 'postgresql://chat:pw@db:5432/chat',
      REDIS_URL: 'redis://redis:6379',
      SERVICE_ENCRYPTION_KEY: ENCRYPTION_KEY,
      SERVICE_ADMIN_TOKEN: 'admin-token-value',
      'fcm-service-account.json': '{"type":"service_account"}',
    });
    const api = find(managed, 'Deployment', API);
    const e = env(api);
    expect(e.get('DATABASE_URL').valueFrom.secretKeyRef).toEqual({
      name: 'chat-chat-service',
      key: 'DATABASE_URL',
    });
    expect(e.has('SERVICE_S3_ACCESS_KEY_ID')).toBe(false); // not given: not referenced
    expect(api.spec.template.metadata.annotations['checksum/secret']).toMatch(/^[0-9a-f]{64}$/);
    const text = JSON.stringify(ofKind(managed, 'Deployment'));
    expect(text).not.toContain('admin-token-value');
    expect(text).not.toContain(ENCRYPTION_KEY);
  });

  it('FCM credentials are mounted as a file where the queue workers run', () => {
    const prodWorker = find(production, 'Deployment', WORKER);
    const file = env(prodWorker).get('SERVICE_PUSH_SERVICE_ACCOUNT_FILE').value as string;
    const mount = (container(prodWorker).volumeMounts as any[]).find((m) =>
      file.startsWith(`${m.mountPath}/`),
    );
    expect(mount.readOnly).toBe(true);
    const volume = (podSpec(prodWorker).volumes as any[]).find((v) => v.name === mount.name);
    expect(volume.secret).toEqual({
      secretName: 'chat-service',
      items: [{ key: 'fcm-service-account.json', path: 'fcm-service-account.json' }],
    });
    expect(env(find(production, 'Deployment', API)).has('SERVICE_PUSH_SERVICE_ACCOUNT_FILE')).toBe(false); // role api
    expect(env(find(managed, 'Deployment', API)).has('SERVICE_PUSH_SERVICE_ACCOUNT_FILE')).toBe(true); // role all
  });

  it('without any database the pods reference DATABASE_URL anyway (they fail visibly) and no migration Job runs', () => {
    expect(env(find(defaults, 'Deployment', API)).get('DATABASE_URL').valueFrom.secretKeyRef.key).toBe(
      'DATABASE_URL',
    );
    expect(ofKind(defaults, 'Job')).toEqual([]);
  });
});

describe('migrations', () => {
  it('run as a pre-install,pre-upgrade hook Job with the CLI', () => {
    const job = find(production, 'Job', 'chat-chat-service-migrations');
    expect(job.metadata.annotations).toMatchObject({
      'helm.sh/hook': 'pre-install,pre-upgrade',
      'helm.sh/hook-delete-policy': 'before-hook-creation,hook-succeeded',
    });
    const c = container(job);
    expect(c.command).toEqual(['node', 'dist/cli.js', 'migrate']);
    expect(podSpec(job).restartPolicy).toBe('Never');
    expect([...env(job).keys()].sort()).toEqual([
      'DATABASE_URL',
      'LOG_LEVEL',
      'SERVICE_DATA_DIR',
      'SERVICE_ENCRYPTION_KEY',
    ]);
    expect(podSpec(job).serviceAccountName).toBeUndefined(); // the chart's does not exist before install
  });

  it('with chart-managed secrets, read them from a hook Secret created before the Job', () => {
    const job = find(managed, 'Job', 'chat-chat-service-migrations');
    const hookSecret = find(managed, 'Secret', 'chat-chat-service-migrations');
    expect(hookSecret.metadata.annotations!['helm.sh/hook']).toBe('pre-install,pre-upgrade');
    expect(Number(hookSecret.metadata.annotations!['helm.sh/hook-weight'])).toBeLessThan(
      Number(job.metadata.annotations!['helm.sh/hook-weight']),
    );
    expect(Object.keys(hookSecret.data as object).sort()).toEqual(['DATABASE_URL', 'SERVICE_ENCRYPTION_KEY']);
    expect(env(job).get('DATABASE_URL').valueFrom.secretKeyRef).toEqual({
      name: 'chat-chat-service-migrations',
      key: 'DATABASE_URL',
    });
  });
});

describe('Service, Ingress, autoscaling, disruption budgets, monitoring', () => {
  it('HPAs are off by default and, when on, own the replica count of each Deployment', () => {
    expect(ofKind(defaults, 'HorizontalPodAutoscaler')).toEqual([]);
    expect(find(defaults, 'Deployment', API).spec.replicas).toBe(2);
    const hpas = ofKind(production, 'HorizontalPodAutoscaler');
    expect(hpas.map((h) => h.spec.scaleTargetRef.name).sort()).toEqual([API, WORKER]);
    for (const d of ofKind(production, 'Deployment')) expect(d.spec.replicas).toBeUndefined();
  });

  it('a PodDisruptionBudget per component that matches its pods', () => {
    for (const name of [API, WORKER]) {
      const pdb = find(defaults, 'PodDisruptionBudget', name);
      expect(pdb.spec.maxUnavailable).toBe(1);
      expect(pdb.spec.selector.matchLabels).toEqual(
        find(defaults, 'Deployment', name).spec.selector.matchLabels,
      );
    }
  });

  it('the Ingress sends everything to the API Service with WebSocket-friendly timeouts', () => {
    const ingress = find(production, 'Ingress', 'chat-chat-service');
    expect(ingress.metadata.annotations!['nginx.ingress.kubernetes.io/proxy-read-timeout']).toBe('3600');
    expect(ingress.spec.rules[0].http.paths[0].backend.service).toEqual({
      name: API,
      port: { name: 'http' },
    });
    expect(find(production, 'Service', API).spec.ports[0].targetPort).toBe('http');
    const sticky = find(
      render({ values: [PRODUCTION_VALUES], set: ['ingress.stickySessions=true'] }),
      'Ingress',
      'chat-chat-service',
    );
    expect(sticky.metadata.annotations).toMatchObject({
      'nginx.ingress.kubernetes.io/affinity': 'cookie',
      'nginx.ingress.kubernetes.io/session-cookie-path': '/socket.io',
    });
  });

  it('the HTTPRoute (optional) attaches to the named Gateway and sends every path to the API Service', () => {
    expect(ofKind(defaults, 'HTTPRoute')).toEqual([]);
    expect(ofKind(gatewayed, 'Ingress')).toEqual([]);
    const route = find(gatewayed, 'HTTPRoute', 'chat-chat-service');
    expect(route.spec.parentRefs).toEqual([
      { name: 'public', namespace: 'gateway-system', sectionName: 'https' },
    ]);
    expect(route.spec.hostnames).toEqual(['chat.example.com']);
    expect(route.spec.rules).toEqual([
      {
        matches: [{ path: { type: 'PathPrefix', value: '/' } }],
        backendRefs: [{ name: API, port: find(gatewayed, 'Service', API).spec.ports[0].port }],
      },
    ]);
    const timed = find(
      render({ values: [PRODUCTION_VALUES, GATEWAY_VALUES], set: ['httpRoute.timeouts.request=0s'] }),
      'HTTPRoute',
      'chat-chat-service',
    );
    expect(timed.spec.rules[0].timeouts).toEqual({ request: '0s' });
  });

  it('NetworkPolicies (optional): in from the gateway, the release’s test pod and monitoring; out to DNS, PostgreSQL, Redis and the named ranges', () => {
    expect(ofKind(defaults, 'NetworkPolicy')).toEqual([]);
    const policies = ofKind(gatewayed, 'NetworkPolicy');
    expect(policies.map((p) => p.metadata.name).sort()).toEqual([API, WORKER]);
    for (const p of policies) {
      // each selects exactly its own component's pods
      const deployment = find(gatewayed, 'Deployment', p.metadata.name);
      expect(p.spec.podSelector.matchLabels).toEqual(deployment.spec.selector.matchLabels);
      expect(p.spec.policyTypes).toEqual(['Ingress', 'Egress']);
      const egress = p.spec.egress as { to: any[]; ports: { port: number; protocol: string }[] }[];
      expect(egress.map((e) => e.ports.map((x) => `${x.port}/${x.protocol}`).join(','))).toEqual([
        '53/UDP,53/TCP',
        '5432/TCP',
        '6379/TCP',
        '443/TCP',
      ]);
      expect(egress[1]!.to.map((t) => t.podSelector.matchLabels)).toEqual([
        { 'cnpg.io/cluster': 'chat-db' },
        { 'cnpg.io/poolerName': 'chat-db-pooler-rw' },
      ]);
      expect(egress[3]!.to[0].ipBlock.except).toContain('10.0.0.0/8');
    }
    const from = (name: string) =>
      (find(gatewayed, 'NetworkPolicy', name).spec.ingress as { from: any[]; ports: any[] }[]).map((r) => {
        expect(r.ports).toEqual([{ port: 'http', protocol: 'TCP' }]);
        return r.from.map((f) => f.namespaceSelector?.matchLabels ?? f.podSelector.matchLabels);
      });
    expect(from(API)).toEqual([
      [{ 'kubernetes.io/metadata.name': 'gateway-system' }],
      [
        {
          'app.kubernetes.io/name': 'chat-service',
          'app.kubernetes.io/instance': 'chat',
          'app.kubernetes.io/component': 'test',
        },
      ],
      [{ 'kubernetes.io/metadata.name': 'monitoring' }],
    ]);
    expect(from(WORKER)).toEqual([[{ 'kubernetes.io/metadata.name': 'monitoring' }]]);
    // the test pod those rules let in is the one `helm test` runs
    expect(find(gatewayed, 'Pod', 'chat-chat-service-test').metadata.labels).toMatchObject(from(API)[1]![0]);
    // with no outbound ranges named, nothing outside the cluster is reachable
    const closed = find(
      render({ values: [PRODUCTION_VALUES, GATEWAY_VALUES], set: ['networkPolicy.egress.external.to=null'] }),
      'NetworkPolicy',
      API,
    );
    expect((closed.spec.egress as any[]).map((e) => e.ports[0].port)).toEqual([53, 5432, 6379]);
    // tracing on: the collector named is reachable on its port, and nothing else is added
    const traced = find(
      render({
        values: [PRODUCTION_VALUES, GATEWAY_VALUES],
        set: [
          'networkPolicy.egress.external.to=null',
          'config.OTEL_EXPORTER_OTLP_ENDPOINT=http://otel-collector.monitoring:4318',
          'networkPolicy.egress.collector.to[0].namespaceSelector.matchLabels.kubernetes\\.io/metadata\\.name=monitoring',
        ],
      }),
      'NetworkPolicy',
      API,
    );
    expect((traced.spec.egress as any[]).map((e) => e.ports[0].port)).toEqual([53, 5432, 6379, 4318]);
    expect((traced.spec.egress as any[])[3].to).toEqual([
      { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'monitoring' } } },
    ]);
  });

  it('the API autoscaler (optional) scales on open sockets per pod, from the service’s own gauge', async () => {
    const hpa = find(gatewayed, 'HorizontalPodAutoscaler', API);
    const pods = (hpa.spec.metrics as any[]).find((m) => m.type === 'Pods');
    expect(pods.pods).toEqual({
      metric: { name: 'chat_sockets_connected' },
      target: { type: 'AverageValue', averageValue: '5000' },
    });
    const exposed = (await new Metrics().registry.getMetricsAsJSON()).map((m) => m.name);
    expect(exposed).toContain(pods.pods.metric.name);
    // off by default, and never on the workers (they hold no sockets)
    expect(find(production, 'HorizontalPodAutoscaler', API).spec.metrics.map((m: any) => m.type)).toEqual([
      'Resource',
    ]);
    expect(find(gatewayed, 'HorizontalPodAutoscaler', WORKER).spec.metrics.map((m: any) => m.type)).toEqual([
      'Resource',
    ]);
  });

  it('the ServiceMonitor (optional) selects the API and worker Services', () => {
    expect(ofKind(defaults, 'ServiceMonitor')).toEqual([]);
    const sm = find(production, 'ServiceMonitor', 'chat-chat-service');
    expect(sm.spec.endpoints[0]).toMatchObject({ port: 'http', path: '/metrics' });
    const selected = ofKind(production, 'Service').filter((s) => {
      const labels = s.metadata.labels!;
      const byLabels = Object.entries(sm.spec.selector.matchLabels as Record<string, string>).every(
        ([k, v]) => labels[k] === v,
      );
      const byExpr = (sm.spec.selector.matchExpressions as any[]).every(
        (x) => x.operator === 'In' && x.values.includes(labels[x.key]),
      );
      return byLabels && byExpr;
    });
    expect(selected.map((s) => s.metadata.name).sort()).toEqual([API, WORKER]);
  });

  it('the PrometheusRule (optional) alerts on follower lag, webhook backlog, 5xx and Redis, over series the service exposes', async () => {
    expect(ofKind(defaults, 'PrometheusRule')).toEqual([]);
    const rule = find(production, 'PrometheusRule', 'chat-chat-service');
    expect(rule.metadata.labels).toMatchObject({ release: 'kube-prometheus-stack' });
    const rules = (rule.spec.groups as any[]).flatMap(
      (g) => g.rules as { alert: string; expr: string; for: string }[],
    );
    expect(rules.map((r) => r.alert).sort()).toEqual([
      'ChatEventFollowerLagging',
      'ChatHttp5xxRate',
      'ChatRedisDown',
      'ChatWebhookBacklog',
    ]);
    // every series a rule reads is one the service registers (histograms: their _count, _sum, _bucket)
    const exposed = new Set(
      (await new Metrics().registry.getMetricsAsJSON()).flatMap((m) =>
        String(m.type) === 'histogram' ? [`${m.name}_count`, `${m.name}_sum`, `${m.name}_bucket`] : [m.name],
      ),
    );
    for (const r of rules) {
      const series = [...r.expr.matchAll(/([a-zA-Z_:][\w:]*)\{([^}]*)\}/g)];
      expect(series.length).toBeGreaterThan(0);
      for (const [, name, selector] of series) {
        expect([r.alert, exposed.has(name!)]).toEqual([r.alert, true]);
        // this release's pods, as the ServiceMonitor's scrapes label them (job: the Service's name)
        expect(selector).toContain('namespace="chat"');
        expect(selector).toContain(`job=~"${API}|${WORKER}"`);
      }
      expect(r.for).toMatch(/^\d+[smh]$/);
    }
    const lag = rules.find((r) => r.alert === 'ChatEventFollowerLagging')!;
    expect(lag.expr).toMatch(/chat_event_follower_lag_seconds\{[^}]*\}\) > 30$/);
    const tuned = render({
      values: [PRODUCTION_VALUES],
      set: ['metrics.prometheusRule.followerLagSeconds=120', 'metrics.prometheusRule.redisDownFor=10m'],
    });
    const tunedRules = (find(tuned, 'PrometheusRule', 'chat-chat-service').spec.groups as any[]).flatMap(
      (g) => g.rules as any[],
    );
    expect(tunedRules.find((r) => r.alert === 'ChatEventFollowerLagging').expr).toMatch(/> 120$/);
    expect(tunedRules.find((r) => r.alert === 'ChatRedisDown').for).toBe('10m');
  });

  it('a ServiceAccount without an API token', () => {
    const sa = find(defaults, 'ServiceAccount', 'chat-chat-service');
    expect(sa.automountServiceAccountToken).toBe(false);
    expect(podSpec(find(defaults, 'Deployment', API)).serviceAccountName).toBe('chat-chat-service');
  });
});

describe('values.schema.json', () => {
  it.each([
    [['config.LOG_LEVEL=loud'], /config\/LOG_LEVEL.*value must be one of/],
    [['config.SERVICE_MAX_MESSAGE_SIZE_BYTES=300000'], /SERVICE_MAX_MESSAGE_SIZE_BYTES/],
    [['config.NO_SUCH_VARIABLE=1'], /additional properties 'NO_SUCH_VARIABLE' not allowed/],
    [['secrets.values.SERVICE_ENCRYPTION_KEY=too-short'], /SERVICE_ENCRYPTION_KEY.*does not match pattern/],
    [['secrets.values.DATABASE_URL=mysql://db/chat'], /DATABASE_URL.*does not match pattern/],
    [['api.replicaCount=-1'], /api\/replicaCount.*minimum/],
    [['replicaCount=3'], /additional properties 'replicaCount' not allowed/],
    [['httpRoute.enabled=true'], /httpRoute.*parentRefs/],
    [
      ['httpRoute.enabled=true', 'httpRoute.parentRefs[0].name=gw', 'httpRoute.timeouts.request=forever'],
      /timeouts\/request.*does not match pattern/,
    ],
    [
      ['httpRoute.enabled=true', 'httpRoute.parentRefs[0].name=gw', 'httpRoute.hostnames[0]=Not A Host'],
      /hostnames\/0.*does not match pattern/,
    ],
    [['networkPolicy.enabled=true'], /networkPolicy\/ingressFrom.*minItems/],
    [['networkPolicy.egress.external.to[0].ipBlock.cidr=everywhere'], /cidr.*does not match pattern/],
    [['networkPolicy.egress.redis.port=70000'], /redis\/port.*maximum/],
    [
      ['networkPolicy.ingressFrom[0].podSelecter.matchLabels.a=b'],
      /additional properties 'podSelecter' not allowed/,
    ],
    [['api.autoscaling.socketsPerPod=-1'], /socketsPerPod.*minimum/],
    [['config.OTEL_EXPORTER_OTLP_ENDPOINT=otel:4318'], /OTEL_EXPORTER_OTLP_ENDPOINT.*does not match pattern/],
    [['config.OTEL_EXPORTER_OTLP_PROTOCOL=udp'], /OTEL_EXPORTER_OTLP_PROTOCOL.*must be one of/],
    [['networkPolicy.egress.collector.port=0'], /collector\/port.*minimum/],
  ])('refuses %j', (set, message) => {
    expect(renderError({ set })).toMatch(message);
  });

  it('covers every variable of the service: in config, in secrets, or set by the chart', () => {
    const schema = JSON.parse(readFileSync(join(CHART, 'values.schema.json'), 'utf8'));
    const configVars = Object.keys(schema.properties.config.properties);
    const secretVars = Object.keys(schema.properties.secrets.properties.values.properties);
    expect(secretVars.sort()).toEqual([...SECRET_VARS].sort());
    // OpenTelemetry's standard variables are the SDK's own (docs/TRACING.md names each one the chart offers)
    const otelVars = configVars.filter((v) => v.startsWith('OTEL_'));
    const tracingDoc = readFileSync(join(ROOT, 'docs/TRACING.md'), 'utf8');
    expect(otelVars.filter((v) => !tracingDoc.includes(v))).toEqual([]);
    expect(
      [...configVars.filter((v) => !otelVars.includes(v)), ...secretVars, ...CHART_SET_VARS].sort(),
    ).toEqual(Object.keys(CONFIG_SCHEMA).sort());
    const values = parse(readFileSync(join(CHART, 'values.yaml'), 'utf8'));
    expect(Object.keys(values.config).sort()).toEqual([...configVars].sort());
  });
});

describe('Chart.yaml and NOTES.txt', () => {
  it('appVersion is the package version; apiVersion v2', () => {
    const chart = parse(readFileSync(join(CHART, 'Chart.yaml'), 'utf8'));
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
    expect(chart.apiVersion).toBe('v2');
    expect(chart.appVersion).toBe(pkg.version);
  });

  it('NOTES tell how to get the first key pair, and warn when no database is configured', () => {
    const notes = (args: string[]) =>
      helm(['install', 'chat', CHART, '--namespace', 'chat', '--dry-run=client', ...args]);
    const prod = notes(['--values', PRODUCTION_VALUES]);
    expect(prod).toContain(`kubectl -n chat exec deploy/${API} -- chat-service workspace create --name Acme`);
    expect(prod).toContain('https://chat.example.com/v1/admin/workspaces');
    expect(prod).not.toContain('WARNING');
    expect(notes([])).toMatch(/WARNING: no database is configured/);
  });
});

describe('example manifests for PostgreSQL and Redis in the cluster', () => {
  it('Redis: valid Kubernetes objects, never evicting queued jobs', () => {
    const redis = parseManifests(readFileSync(join(ROOT, 'deploy/helm/examples/redis.yaml'), 'utf8'));
    expect(validateManifests(redis)).toEqual([]);
    expect(find(redis, 'ConfigMap', 'chat-redis').data['redis.conf']).toMatch(/maxmemory-policy noeviction/);
  });

  it('CloudNativePG: a pooler only in session mode (the leaders hold session advisory locks)', () => {
    const docs = parseManifests(readFileSync(join(ROOT, 'deploy/helm/examples/cloudnative-pg.yaml'), 'utf8'));
    expect(docs.map((d) => d.kind)).toEqual(['Cluster', 'Pooler']);
    expect(find(docs, 'Pooler', 'chat-db-pooler-rw').spec.pgbouncer.poolMode).toBe('session');
  });
});
