/**
 * Gateway commands (src/replication/commands.ts): requests and answers survive the wire exactly (bodies as
 * bytes, hints as sent, a refusal's class and text), malformed messages are refused by name, and a
 * gateway's forwarder sends what one turn queued as one message and answers undefined when no sequencer
 * does. Messages are sealed: the sequencer takes only a command sealed by a gateway for its subject, within
 * the replay window and never twice; a gateway takes only the answer sealed for its command. The transport
 * over a real nats-server is test/node/cluster.test.ts's gateway test.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Packr } from 'msgpackr';
import {
  CommandForwarder,
  CommandServer,
  openRequests,
  sealAnswers,
  sealRequests,
  CommandWireError,
  MAX_BATCH,
  commandSubject,
  decodeAnswers,
  decodeRequests,
  encodeAnswers,
  encodeRequests,
  requestBytes,
  type CommandAnswer,
  type CommandRequest,
} from '../../src/replication/commands.ts';
import type { NatsLink } from '../../src/replication/nats-link.ts';
import { nonceOf, ClusterKeys } from '../../src/replication/seal.ts';
import { silentLogger, type Logger } from '../../src/runtime/log.ts';
import { CLUSTER_KEYS } from '../fixtures/cluster.ts';

const SETTINGS = { natsUrl: 'nats://unused', stream: 'PM_JOURNAL', replicas: 1, keys: CLUSTER_KEYS };

const order: CommandRequest = {
  method: 'POST',
  path: '/order',
  query: '',
  headers: { svc_api_key: 'k', 'content-type': 'application/json' },
  body: Buffer.from('{"order":{}}'),
  ip: '203.0.113.9',
  receivedAt: 1_764_300_000_123,
  hints: [{ k: 'key', id: '0x' + 'ab'.repeat(32), r: null }],
};
const cancel: CommandRequest = { method: 'DELETE', path: '/cancel-all', query: 'x=1', headers: {}, body: undefined, ip: '::1', receivedAt: 5 };

test('requests and answers round-trip exactly', () => {
  const back = decodeRequests(encodeRequests([order, cancel]));
  assert.deepEqual(back, [order, cancel]);
  assert.ok(Buffer.isBuffer(back[0]!.body));
  const answers: CommandAnswer[] = [
    { status: 200, headers: { 'X-Journal-Seq': '42' }, body: '{"success":true}' },
    { status: 400, body: '{"error":"x"}', refusal: { class: 'order-rule', text: 'the price is not on the tick' } },
    { status: 200, body: '', noBody: true },
  ];
  assert.deepEqual(decodeAnswers(encodeAnswers(answers), 3), answers);
});

test('malformed messages are refused by name, never half read', () => {
  const packr = new Packr({ useRecords: false });
  const refused = (bytes: Uint8Array, what: RegExp) => assert.throws(() => decodeRequests(bytes), (e: unknown) => e instanceof CommandWireError && what.test((e as Error).message));
  refused(Buffer.from([0x81]), /not msgpack/);
  refused(packr.pack([1, 2]), /not an object/);
  refused(packr.pack({ v: 1, t: 1, q: [] }), /unknown command version 1/);
  refused(packr.pack({ v: 2, q: [{}] }), /bad time t/);
  refused(packr.pack({ v: 2, t: 1, q: [] }), /bad request list/);
  refused(packr.pack({ v: 2, t: 1, q: Array.from({ length: MAX_BATCH + 1 }, () => ({})) }), /bad request list/);
  refused(packr.pack({ v: 2, t: 1, q: [{ m: 'POST', p: '/order', s: '', h: { a: 1 }, ip: '', t: 0 }] }), /request 0: bad field/);
  refused(packr.pack({ v: 2, t: 1, q: [{ m: 'POST', p: '/order', s: '', h: {}, b: 'text', ip: '', t: 0 }] }), /request 0: bad body/);
  assert.throws(() => decodeAnswers(encodeAnswers([{ status: 200, body: '' }]), 2), /expected 2 answers/);
  assert.throws(() => decodeAnswers(packr.pack({ v: 2, a: [{ s: 200, b: '', r: { class: 1 } }] }), 1), /bad refusal/);
});

test("the forwarder sends one turn's requests as one message, in order, and answers undefined when no sequencer does", async () => {
  const sent: Array<{ subject: string; reqs: CommandRequest[] }> = [];
  let answering = true;
  const link = {
    nc: {
      request: async (subject: string, data: Uint8Array) => {
        const reqs = decodeRequests(openRequests(CLUSTER_KEYS, subject, data)!);
        sent.push({ subject, reqs });
        if (!answering) throw new Error('503');
        return { data: sealAnswers(CLUSTER_KEYS, subject, nonceOf(data), reqs.map((r) => ({ status: 200, body: r.path }))) };
      },
    },
  } as unknown as NatsLink;
  const f = new CommandForwarder({ settings: SETTINGS, logger: silentLogger, timeoutMs: 1000, link });
  const answers = await Promise.all([f.forward(order), f.forward(cancel)]);
  assert.deepEqual(answers.map((a) => a?.body), ['/order', '/cancel-all']);
  assert.equal(sent.length, 1);
  assert.equal(sent[0]!.subject, commandSubject('PM_JOURNAL'));
  assert.equal(sent[0]!.subject, 'pm_journal.cmd');
  // A turn's requests past the server's max_payload leave as several messages, each within it.
  const heavy = { ...cancel, body: Buffer.alloc(f.maxRequestBytes() / 3) };
  sent.length = 0;
  await Promise.all([f.forward(heavy), f.forward(heavy), f.forward(heavy), f.forward(order)]);
  assert.deepEqual(sent.map((m) => m.reqs.length), [2, 2]);
  for (const m of sent) assert.ok(m.reqs.reduce((n, r) => n + requestBytes(r), 0) <= f.maxRequestBytes());
  answering = false;
  assert.equal(await f.forward(order), undefined);
  assert.deepEqual(f.stats, { messages: 4, requests: 7, unanswered: 1, refusedAnswers: 0 });
  await f.close();
  assert.equal(await f.forward(order), undefined, 'closed: nothing leaves');
});

test('the sequencer takes a command only sealed by a gateway for its subject, within the replay window, and once; the refusals are counted and logged sparingly', () => {
  const errors: string[] = [];
  const logger = { error: (_d: unknown, m: string) => errors.push(m), warn: () => undefined, info: () => undefined } as unknown as Logger;
  const server = new CommandServer({ settings: SETTINGS, logger, handle: async () => [], replayWindowMs: 10_000 });
  const subject = commandSubject('PM_JOURNAL', 3);
  const now = 1_764_300_000_000;
  const sealed = sealRequests(CLUSTER_KEYS, subject, [order], now).bytes;
  const took = server.receive(subject, sealed, now + 20);
  assert.deepEqual(took?.reqs, [order], 'a gateway\'s command, its client address and hints as sent');
  assert.equal(took?.nonce, nonceOf(sealed));
  // A captured command sent again: refused (admin writes are not idempotent).
  assert.equal(server.receive(subject, sealed, now + 40), undefined);
  // Forged: plain msgpack (any client could send it), sealed with another key, or for another term's subject.
  assert.equal(server.receive(subject, encodeRequests([order], now), now), undefined);
  assert.equal(server.receive(subject, ClusterKeys.fromMaster(Buffer.alloc(32, 3)).seal('commands', ['command', subject], encodeRequests([order], now)), now), undefined);
  assert.equal(server.receive(subject, sealRequests(CLUSTER_KEYS, commandSubject('PM_JOURNAL', 2), [order], now).bytes, now), undefined);
  // One bit flipped in a sealed command (the client address, say).
  const flipped = Buffer.from(sealRequests(CLUSTER_KEYS, subject, [order], now).bytes);
  flipped[20] ^= 1;
  assert.equal(server.receive(subject, flipped, now), undefined);
  // Sent outside the window (a replay after the remembered nonces were dropped, or clocks apart).
  assert.equal(server.receive(subject, sealRequests(CLUSTER_KEYS, subject, [order], now - 11_000).bytes, now), undefined);
  assert.equal(server.receive(subject, sealRequests(CLUSTER_KEYS, subject, [order], now + 11_000).bytes, now), undefined);
  assert.deepEqual(server.stats, { messages: 0, requests: 0, malformed: 0, refused: 7 });
  // Seven refusals of three kinds (replayed, forged, stale): one log line per kind, not one per message.
  assert.equal(errors.length, 3, errors.join('\n'));
});

test('a gateway takes only the answer sealed for its command: a forged answer (an attacker in the queue group) is refused and counted, its client answered as unanswered', async () => {
  let forge = true;
  const link = {
    nc: {
      request: async (subject: string, data: Uint8Array) => {
        const reqs = decodeRequests(openRequests(CLUSTER_KEYS, subject, data)!);
        const answers = reqs.map(() => ({ status: 200, body: '{"success":true,"status":"matched"}' }));
        // Plain answers, another command's nonce, or another key: none is this command's answer.
        if (forge) return { data: encodeAnswers(answers) };
        return { data: sealAnswers(CLUSTER_KEYS, subject, 'another-nonce', answers) };
      },
    },
  } as unknown as NatsLink;
  const f = new CommandForwarder({ settings: SETTINGS, logger: silentLogger, timeoutMs: 1000, link });
  assert.equal(await f.forward(order), undefined);
  forge = false;
  assert.equal(await f.forward(order), undefined);
  assert.deepEqual(f.stats, { messages: 2, requests: 2, unanswered: 2, refusedAnswers: 2 });
  await f.close();
});
