/** The part of autocannon 8's API the benchmarks use (the package ships no types). */
declare module 'autocannon' {
  export interface Options {
    url: string;
    method?: string;
    headers?: Record<string, string>;
    body?: string;
    /** Total requests to send; overrides `duration`. */
    amount?: number;
    connections?: number;
    /** Seconds before a request counts as timed out. */
    timeout?: number;
    /** Milliseconds between samples of the requests/s histogram; a run ends on a sample. */
    sampleInt?: number;
  }

  export interface Histogram {
    average: number;
    p50: number;
    p99: number;
    min: number;
    max: number;
  }

  export interface Result {
    /** Seconds, at 10 ms resolution. */
    duration: number;
    errors: number;
    timeouts: number;
    non2xx: number;
    statusCodeStats: Record<string, { count: number }>;
    /** Latency in whole milliseconds. */
    latency: Histogram;
    requests: Histogram & { total: number; sent: number };
  }

  /** Resolves with the result when the run ends; emits one `response` per answered request. */
  export interface Instance extends PromiseLike<Result> {
    on(
      event: 'response',
      listener: (client: unknown, statusCode: number, responseBytes: number, responseTimeMs: number) => void,
    ): this;
    stop(): void;
  }

  export default function autocannon(options: Options): Instance;
}
