import { Agent, request } from 'http';

export interface RawRequest {
  method: string;
  /** Path and query exactly as they go on the request line (already percent-encoded). */
  path: string;
  headers: Record<string, string>;
  body?: Buffer;
}

export interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  /** The body parsed as JSON, or undefined. */
  json: unknown;
}

const agent = new Agent({ keepAlive: true, maxSockets: 4 });

/**
 * One request with exactly the bytes given: supertest would re-encode paths, serialize bodies and
 * move a GET's body into the query, which is what the fuzzer must control itself. Rejects when the
 * server closes the connection without an answer or takes longer than `timeoutMs`.
 */
export function rawRequest(baseUrl: string, req: RawRequest, timeoutMs = 30_000): Promise<RawResponse> {
  const url = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const headers: Record<string, string | number> = { ...req.headers };
    if (req.body) headers['content-length'] = req.body.length;
    const r = request(
      { host: url.hostname, port: url.port, method: req.method, path: req.path, headers, agent },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', reject);
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let json: unknown;
          try {
            json = JSON.parse(text);
          } catch {
            json = undefined;
          }
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json });
        });
      },
    );
    r.setTimeout(timeoutMs, () => r.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    r.on('error', reject);
    r.end(req.body);
  });
}

export function closeRawAgent(): void {
  agent.destroy();
}
