/** The parts of the service's OpenAPI document (`/docs-json`) the fuzzer reads. */

export interface Schema {
  $ref?: string;
  allOf?: Schema[];
  oneOf?: Schema[];
  anyOf?: Schema[];
  type?: string;
  enum?: unknown[];
  format?: string;
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  minItems?: number;
  maxItems?: number;
  items?: Schema;
  properties?: Record<string, Schema>;
  required?: string[];
  additionalProperties?: boolean | Schema;
}

export interface Parameter {
  name: string;
  in: 'path' | 'query' | 'header' | 'cookie';
  required?: boolean;
  description?: string;
  schema?: Schema;
}

export type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';

/** The security schemes of CONTRACT §3 as the document names them (common/auth/auth.decorator.ts). */
export type Scheme = 'workspaceKey' | 'workspaceBasic' | 'userJwt' | 'adminToken';

export interface Operation {
  method: Method;
  /** The document's path template, `/v1/channels/{id}/messages`. */
  path: string;
  /** `METHOD /path`, the name FUZZ_ONLY matches and failures report. */
  key: string;
  params: Parameter[];
  /** The JSON request body's schema, refs resolved; undefined when the operation takes none. */
  body?: Schema;
  bodyRequired: boolean;
  /** Empty: a public route. */
  schemes: Scheme[];
}

interface Document {
  paths: Record<string, Partial<Record<string, RawOperation>>>;
  components?: { schemas?: Record<string, Schema> };
}

interface RawOperation {
  parameters?: Parameter[];
  requestBody?: { required?: boolean; content?: Record<string, { schema?: Schema }> };
  security?: Record<string, unknown>[];
}

const METHODS: Method[] = ['get', 'post', 'put', 'patch', 'delete'];
const SCHEMES: Scheme[] = ['workspaceKey', 'workspaceBasic', 'userJwt', 'adminToken'];

/** Every operation of the document, in document order, with `$ref`s resolved (cycles cut). */
export function operationsOf(doc: Document): Operation[] {
  const schemas = doc.components?.schemas ?? {};
  const resolve = (s: Schema | undefined, seen: string[] = []): Schema | undefined => {
    if (!s) return undefined;
    if (s.$ref) {
      const name = s.$ref.replace('#/components/schemas/', '');
      if (seen.includes(name)) return {};
      return resolve(schemas[name] ?? {}, [...seen, name]);
    }
    const wrapped = s.allOf ?? s.oneOf ?? s.anyOf;
    if (wrapped && wrapped.length === 1)
      return resolve({ ...s, allOf: undefined, oneOf: undefined, anyOf: undefined, ...wrapped[0] }, seen);
    const out: Schema = { ...s };
    if (s.items) out.items = resolve(s.items, seen);
    if (s.properties) {
      out.properties = Object.fromEntries(
        Object.entries(s.properties).map(([k, v]) => [k, resolve(v, seen) ?? {}]),
      );
    }
    return out;
  };

  const ops: Operation[] = [];
  for (const [path, byMethod] of Object.entries(doc.paths)) {
    for (const method of METHODS) {
      const op = byMethod[method];
      if (!op) continue;
      const json = op.requestBody?.content?.['application/json'];
      ops.push({
        method,
        path,
        key: `${method.toUpperCase()} ${path}`,
        params: (op.parameters ?? []).map((p) => ({ ...p, schema: resolve(p.schema) ?? {} })),
        body: json ? (resolve(json.schema) ?? {}) : undefined,
        bodyRequired: op.requestBody?.required ?? false,
        schemes: (op.security ?? [])
          .flatMap((s) => Object.keys(s))
          .filter((s): s is Scheme => (SCHEMES as string[]).includes(s)),
      });
    }
  }
  return ops;
}
