import type { FetchFunction, FetchRequestInit } from '../src';

/** A request as the fake fetch saw it, with the body parsed back from JSON. */
export interface RecordedRequest {
  url: string;
  method: string;
  headers: Record<string, string>;
  body: unknown;
  signal: AbortSignal | undefined;
}

export type Responder = (request: RecordedRequest) => Response | Promise<Response>;

/** A fetch that records every request and answers with `respond`. */
export function fakeFetch(respond: Responder): { fetch: FetchFunction; requests: RecordedRequest[] } {
  const requests: RecordedRequest[] = [];
  const fetch: FetchFunction = async (url: string, init: FetchRequestInit) => {
    const request: RecordedRequest = {
      url,
      method: init.method,
      headers: { ...init.headers },
      body: init.body === undefined ? undefined : (JSON.parse(init.body) as unknown),
      signal: init.signal,
    };
    requests.push(request);
    return respond(request);
  };
  return { fetch, requests };
}

export function json(body: unknown, status = 200, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { 'Content-Type': 'application/json', ...headers },
  });
}

/** A fetch that never answers; it rejects like the real one when its signal aborts. */
export function hangingFetch(): { fetch: FetchFunction; calls: RecordedRequest[] } {
  const calls: RecordedRequest[] = [];
  const fetch: FetchFunction = (url, init) => {
    calls.push({ url, method: init.method, headers: { ...init.headers }, body: undefined, signal: init.signal });
    return new Promise((_resolve, reject) => {
      init.signal?.addEventListener('abort', () => {
        reject(new DOMException('This operation was aborted', 'AbortError'));
      });
    });
  };
  return { fetch, calls };
}

export const BASE = 'https://api.test.example/v1';
