// The few autocannon 9 types the benchmarks use (the package ships no typings).
declare module 'autocannon' {
  namespace autocannon {
    interface Histogram {
      average: number;
      mean: number;
      stddev: number;
      min: number;
      max: number;
      p50: number;
      p90: number;
      p97_5: number;
      p99: number;
    }
    interface Result {
      requests: Histogram & { total: number; sent: number };
      latency: Histogram;
      throughput: Histogram;
      errors: number;
      timeouts: number;
      non2xx: number;
      duration: number;
      connections: number;
      '2xx': number;
    }
    interface Request {
      method?: string;
      path?: string;
      headers?: Record<string, string>;
      body?: string;
      /** called before each request; returns the request to send */
      setupRequest?: (req: Request, context: Record<string, unknown>) => Request;
    }
    /** one connection */
    interface Client {
      setRequests(requests: Request[]): void;
    }
    interface Options {
      url: string;
      connections?: number;
      duration?: number;
      pipelining?: number;
      method?: string;
      headers?: Record<string, string>;
      body?: string;
      /** seconds before a request counts as timed out (default 10) */
      timeout?: number;
      requests?: Request[];
      /** called once per connection when it is created */
      setupClient?: (client: Client) => void;
    }
    /** a run in progress: emits 'response' (client, statusCode, resBytes, responseTime ms) and 'reqError' */
    interface Instance extends NodeJS.EventEmitter {
      stop(): void;
    }
  }
  function autocannon(opts: autocannon.Options): Promise<autocannon.Result>;
  function autocannon(
    opts: autocannon.Options,
    cb: (err: Error | null, result: autocannon.Result) => void,
  ): autocannon.Instance;
  export = autocannon;
}
