/**
 * A strict checker of a JSON value against a schema of the service's OpenAPI 3.0 document: $ref, allOf,
 * oneOf, nullable, type, enum, format date-time, minimum/maximum, required, items. Strict on purpose:
 * an object property the schema does not declare is a problem (unless additionalProperties allows
 * it), so an answer that grew a field the document does not show fails the test.
 */
export interface OpenApiDocument {
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, Schema> };
}

export interface Operation {
  operationId?: string;
  summary?: string;
  requestBody?: { required?: boolean; content: Record<string, { schema?: Schema }> };
  responses: Record<string, { description?: string; content?: Record<string, { schema?: Schema }> }>;
  parameters?: { name: string; in: string; required?: boolean; schema?: Schema }[];
  security?: Record<string, string[]>[];
  tags?: string[];
}

export interface Schema {
  $ref?: string;
  type?: string;
  format?: string;
  nullable?: boolean;
  enum?: unknown[];
  allOf?: Schema[];
  oneOf?: Schema[];
  properties?: Record<string, Schema>;
  required?: string[];
  additionalProperties?: boolean | Schema;
  items?: Schema;
  minimum?: number;
  maximum?: number;
  minItems?: number;
  maxItems?: number;
}

export const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'patch', 'options', 'head'] as const;

export function resolveRef(doc: OpenApiDocument, schema: Schema): Schema {
  let s = schema;
  while (s.$ref) {
    const name = s.$ref.replace('#/components/schemas/', '');
    const target = doc.components.schemas[name];
    if (!target) throw new Error(`unresolved ${s.$ref}`);
    s = target;
  }
  return s;
}

const DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

/** The problems of `value` against `schema`, each as `<path>: <what>`; empty when it conforms. */
export function checkSchema(doc: OpenApiDocument, schema: Schema, value: unknown, at = '$'): string[] {
  const s = resolveRef(doc, schema);
  if (value === null)
    return s.nullable || s.type === 'null' ? [] : [`${at}: null, but the schema is not nullable`];
  if (s.allOf) {
    // Nest wraps a nullable reference as {nullable, allOf: [$ref]}: the members hold the shape
    return s.allOf.flatMap((member) => checkSchema(doc, member, value, at));
  }
  if (s.oneOf) {
    const matching = s.oneOf.filter((member) => checkSchema(doc, member, value, at).length === 0);
    return matching.length === 1 ? [] : [`${at}: matches ${matching.length} of the oneOf schemas`];
  }
  const problems: string[] = [];
  if (s.enum && !s.enum.includes(value))
    problems.push(`${at}: ${JSON.stringify(value)} is not one of ${JSON.stringify(s.enum)}`);
  switch (s.type) {
    case 'string':
      if (typeof value !== 'string') return [`${at}: expected a string, got ${JSON.stringify(value)}`];
      if (s.format === 'date-time' && !(DATE_TIME.test(value) && !Number.isNaN(Date.parse(value))))
        problems.push(`${at}: ${value} is not a date-time`);
      break;
    case 'integer':
    case 'number':
      if (typeof value !== 'number' || (s.type === 'integer' && !Number.isInteger(value)))
        return [
          `${at}: expected ${s.type === 'integer' ? 'an integer' : 'a number'}, got ${JSON.stringify(value)}`,
        ];
      if (s.minimum !== undefined && value < s.minimum)
        problems.push(`${at}: ${value} < minimum ${s.minimum}`);
      if (s.maximum !== undefined && value > s.maximum)
        problems.push(`${at}: ${value} > maximum ${s.maximum}`);
      break;
    case 'boolean':
      if (typeof value !== 'boolean') return [`${at}: expected a boolean, got ${JSON.stringify(value)}`];
      break;
    case 'array':
      if (!Array.isArray(value)) return [`${at}: expected an array`];
      if (s.minItems !== undefined && value.length < s.minItems)
        problems.push(`${at}: fewer than ${s.minItems} items`);
      if (s.maxItems !== undefined && value.length > s.maxItems)
        problems.push(`${at}: more than ${s.maxItems} items`);
      if (s.items)
        value.forEach((item, i) => problems.push(...checkSchema(doc, s.items!, item, `${at}[${i}]`)));
      break;
    case 'object':
    case undefined: {
      if (s.type === undefined && !s.properties) break; // an unconstrained schema
      if (typeof value !== 'object' || Array.isArray(value)) return [`${at}: expected an object`];
      const obj = value as Record<string, unknown>;
      for (const name of s.required ?? [])
        if (!(name in obj)) problems.push(`${at}.${name}: required, missing`);
      for (const [name, v] of Object.entries(obj)) {
        const prop = s.properties?.[name];
        if (prop) problems.push(...checkSchema(doc, prop, v, `${at}.${name}`));
        else if (typeof s.additionalProperties === 'object')
          problems.push(...checkSchema(doc, s.additionalProperties, v, `${at}.${name}`));
        else if (s.additionalProperties !== true && s.properties)
          problems.push(`${at}.${name}: not in the schema`);
      }
      break;
    }
    default:
      problems.push(`${at}: unknown schema type ${s.type}`);
  }
  return problems;
}

/** The document's operation for a request, matching `/v1/channels/{id}` templates segment by segment. */
export function findOperation(
  doc: OpenApiDocument,
  method: string,
  pathname: string,
): { path: string; op: Operation } | undefined {
  const segments = pathname.split('/');
  for (const [path, item] of Object.entries(doc.paths)) {
    const op = item[method.toLowerCase()];
    if (!op) continue;
    const template = path.split('/');
    if (template.length !== segments.length) continue;
    if (template.every((t, i) => /^\{[^}]+\}$/.test(t) || t === segments[i])) return { path, op };
  }
  return undefined;
}

/** The JSON schema of an operation's answer with `status`, if the document gives one. */
export function responseSchema(op: Operation, status: number): Schema | undefined {
  return op.responses[String(status)]?.content?.['application/json']?.schema;
}
