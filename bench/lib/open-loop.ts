/**
 * Loopback GET load with steady arrivals, for read endpoints whose target is a latency at a rate.
 *
 * Open loop: request i is due at t0 + i / rate, whatever happened to the requests before it, and its
 * latency runs from that due time to the last byte of its answer. A request that finds every connection
 * busy waits in the client, and that wait is in its latency (no coordinated omission). This is the
 * arrival pattern "1,000 requests/s" describes: one request per millisecond, not autocannon's
 * `overallRate`, which sends each connection's share of a second back to back at the start of the second
 * (bench/lib/autocannon.ts). Without `rate` it runs flat out: every connection sends its next request as
 * soon as its answer is in, latency from the send.
 *
 * The client is tools/load.ts's minimal HTTP/1.1 client (Content-Length and chunked framing, nothing
 * else), run in a child process so the server under test keeps a core; the child reports its own CPU per
 * request. Timer lateness in the client counts against the server, never for it.
 */
import { HttpClient } from '../../tools/load.ts';
import { runInChild, serveInChild } from './child.ts';

export interface OpenLoopOptions {
  url: string;
  /** GET in turn. */
  paths: readonly string[];
  /** Requests per second; flat out when absent. */
  rate?: number;
  seconds: number;
  connections: number;
}

export interface OpenLoopResult {
  sent: number;
  ok: number;
  non2xx: number;
  errors: number;
  /** Answers per second over the window (first due time .. last answer). */
  rps: number;
  /** Milliseconds, one sample per response. */
  p50: number;
  p99: number;
  p999: number;
  max: number;
  /** The client's own CPU per request, µs. */
  clientCpuUs: number;
}

export function runOpenLoop(o: OpenLoopOptions): Promise<OpenLoopResult> {
  const client = new HttpClient(o.url, o.connections);
  const total = o.rate === undefined ? Number.POSITIVE_INFINITY : Math.round(o.rate * o.seconds);
  const interval = o.rate === undefined ? 0 : 1000 / o.rate;
  const lat: number[] = [];
  let sent = 0;
  let answered = 0;
  let ok = 0;
  let non2xx = 0;
  let errors = 0;
  let last = 0;
  const cpu0 = process.cpuUsage();
  return new Promise((resolve) => {
    const t0 = performance.now() + 20;
    const deadline = t0 + o.seconds * 1000;
    let stopped = false;
    const finish = () => {
      client.close();
      const cpu = process.cpuUsage(cpu0);
      lat.sort((a, b) => a - b);
      const at = (q: number) => (lat.length === 0 ? 0 : Math.round(lat[Math.min(lat.length - 1, Math.floor(lat.length * q))]! * 100) / 100);
      resolve({
        sent,
        ok,
        non2xx,
        errors,
        rps: answered / ((last - t0) / 1000),
        p50: at(0.5),
        p99: at(0.99),
        p999: at(0.999),
        max: at(1),
        clientCpuUs: Math.round((cpu.user + cpu.system) / Math.max(1, answered)),
      });
    };
    const send = (i: number, from: number) => {
      sent++;
      client.send('GET', o.paths[i % o.paths.length]!, {}, undefined, (a) => {
        last = performance.now();
        answered++;
        lat.push(last - from);
        if (a.error !== undefined) errors++;
        else if (a.status >= 200 && a.status < 300) ok++;
        else non2xx++;
        if (o.rate === undefined) {
          if (last < deadline) send(sent, performance.now());
          else if (answered === sent) finish();
        } else if (stopped && answered === sent) finish();
      });
    };
    if (o.rate === undefined) {
      setTimeout(() => {
        for (let c = 0; c < o.connections; c++) send(sent, performance.now());
      }, 20);
      return;
    }
    const pump = () => {
      const now = performance.now();
      const due = Math.min(total, Math.floor((now - t0) / interval) + 1);
      while (sent < due) send(sent, t0 + sent * interval);
      if (sent < total) setTimeout(pump, Math.max(0, t0 + sent * interval - performance.now()));
      else {
        stopped = true;
        if (answered === sent) finish();
      }
    };
    setTimeout(pump, Math.max(0, t0 - performance.now()));
  });
}

const CHILD_FLAG = 'PM_BENCH_OPEN_LOOP_CHILD';

/** runOpenLoop in a child process. */
export function runOpenLoopChild(o: OpenLoopOptions): Promise<OpenLoopResult> {
  return runInChild(import.meta.url, CHILD_FLAG, o);
}

serveInChild(CHILD_FLAG, runOpenLoop);
