/**
 * The floor prototype's other thread (server.ts): answers every message with itself. It stands for the
 * hop to the shard, so the floor pays what any thread hand-off costs (a postMessage each way, and a
 * wake-up of each thread when it was idle) and nothing of what the shard computes.
 */
import { parentPort } from 'node:worker_threads';

if (parentPort === null) throw new Error('bench/trading/floor/worker.ts runs as a worker thread');
const port = parentPort;
port.on('message', (m: unknown) => port.postMessage(m));
