/**
 * Writes a nats-server configuration for a cluster of ours (docs/cluster.md, "Running more than one node"; the
 * threat model: docs/decisions/scale-out.md, "The cluster's threat model"): one user per role, a password generated
 * for each, and the least permissions each role needs, so a node's credential (or a machine that holds it) can do no
 * more than that role does. NATS is still not trusted: every message that matters is authenticated by the
 * nodes' key whatever the permissions let through; these keep the rest (reading others' answers, taking the
 * command queue, managing the stream) from every credential that does not need it.
 *
 *   npx tsx tools/nats-config.ts --out /etc/pm-nats [--stream PM_JOURNAL] [--listen 127.0.0.1:4222]
 *       [--store /var/lib/pm-nats] [--tls-cert cert.pem --tls-key key.pem [--tls-ca ca.pem]]
 *
 * writes `<out>/nats.conf` (the server's) and `<out>/<role>.env` (NATS_USER and NATS_PASSWORD of each role, for
 * its nodes), all mode 0600, and prints what to run. Off loopback it refuses to write a configuration without
 * TLS (`--tls-cert`, `--tls-key`): passwords and every message would cross the network in clear.
 *
 * Users and what each may do (S = the stream, s = its name lowercased, b = `s_cluster`, the lease's bucket,
 * o = `s_snapshots`, the snapshots' object store, whose stream is `OBJ_o`):
 *   sequencer  the sequencer and its standbys (the roles swap on a takeover, so they share one): publish the
 *              journal records (`s.batches`), create (never update or delete) the stream, the lease bucket
 *              and the snapshots' bucket, read and write the lease key, read the stream (a standby follows
 *              it), take commands (`s.cmd.>`, queue group `sequencer`) and followers' reads of history
 *              (`s.reads.>`, replication/commands.ts) and answer them (`allow_responses`:
 *              only to the inbox of a message it received), and send such reads (a standby started from the
 *              state, until its backfill is done); ship snapshots (write `$O.o.>`) and purge two
 *              streams only: S below the oldest snapshot kept, and `OBJ_o` (the objects of snapshots it drops)
 *   gateway    send commands (`s.cmd`, `s.cmd.>`) and reads of history (`s.reads`, `s.reads.>`), follow the
 *              stream, read the lease and the snapshots
 *   replica    send reads of history (`s.reads`, `s.reads.>`: the sequencer serves the history routes there,
 *              nothing else), follow the stream, read the lease and the snapshots; nothing else
 *   admin      everything (an operator's `nats` CLI: stream repairs, the upgrade's stream removal); no node
 *              runs as it
 * Every role reads replies only under its own inbox prefix (`_INBOX_<user>.>`; the nodes connect with it,
 * replication/nats-link.ts), so no role reads another's answers; stream and consumer management calls beyond
 * creating them (`$JS.API.STREAM.UPDATE|DELETE|PURGE|MSG.DELETE`, `$JS.API.CONSUMER.DELETE`) are denied to
 * every node's user, purges but the sequencer's two.
 */
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { runMain } from './run-main.ts';

export const ROLES = ['sequencer', 'gateway', 'replica', 'admin'] as const;
export type NatsRole = (typeof ROLES)[number];

export interface NatsPermissions {
  publish: { allow: string[]; deny?: string[] };
  subscribe: { allow: string[]; deny?: string[] };
  allow_responses?: boolean;
}

/** What no node's user may call: stream and consumer management beyond creating them. */
const MANAGEMENT_DENIED = ['$JS.API.STREAM.UPDATE.>', '$JS.API.STREAM.DELETE.>', '$JS.API.STREAM.PURGE.>', '$JS.API.STREAM.MSG.DELETE.>', '$JS.API.CONSUMER.DELETE.>', '$JS.API.CONSUMER.DURABLE.>'];

/** Each role's permissions for the stream `stream` (cluster.stream). */
export function rolePermissions(stream: string): Record<NatsRole, NatsPermissions> {
  const s = stream.toLowerCase();
  const kv = `KV_${s}_cluster`;
  const obj = `OBJ_${s}_snapshots`;
  // Following the stream (an ordered consumer), reading the lease, and reading the snapshots (replication/
  // snapshot-store.ts: the object store reads through push consumers with flow control, answered on $JS.FC).
  const follow = [
    '$JS.API.INFO',
    `$JS.API.STREAM.INFO.${stream}`,
    `$JS.API.STREAM.MSG.GET.${stream}`,
    `$JS.API.CONSUMER.CREATE.${stream}`,
    `$JS.API.CONSUMER.CREATE.${stream}.>`,
    `$JS.API.CONSUMER.INFO.${stream}.>`,
    `$JS.API.CONSUMER.MSG.NEXT.${stream}.>`,
    `$JS.API.STREAM.INFO.${kv}`,
    `$JS.API.STREAM.MSG.GET.${kv}`,
    `$JS.API.DIRECT.GET.${kv}`,
    `$JS.API.DIRECT.GET.${kv}.>`,
    `$JS.API.STREAM.INFO.${obj}`,
    `$JS.API.STREAM.MSG.GET.${obj}`,
    `$JS.API.CONSUMER.CREATE.${obj}`,
    `$JS.API.CONSUMER.CREATE.${obj}.>`,
    `$JS.API.CONSUMER.INFO.${obj}.>`,
    `$JS.FC.${obj}.>`,
  ];
  const inbox = (user: string) => `_INBOX_${user}.>`;
  return {
    sequencer: {
      publish: {
        allow: [
          ...follow,
          `${s}.batches`,
          // A standby started from the state sends its reads of history until its backfill is done.
          `${s}.reads`,
          `${s}.reads.>`,
          `$JS.API.STREAM.CREATE.${stream}`,
          `$JS.API.STREAM.CREATE.${kv}`,
          `$KV.${s}_cluster.sequencer`,
          `$JS.API.STREAM.CREATE.${obj}`,
          `$O.${s}_snapshots.>`,
          `$JS.API.STREAM.PURGE.${stream}`,
          `$JS.API.STREAM.PURGE.${obj}`,
        ],
        // Purging is allowed by name above (the stream's bound, the snapshots it drops), nothing else of it.
        deny: MANAGEMENT_DENIED.filter((d) => d !== '$JS.API.STREAM.PURGE.>'),
      },
      subscribe: { allow: [inbox('sequencer'), `${s}.cmd`, `${s}.cmd.>`, `${s}.reads`, `${s}.reads.>`] },
      allow_responses: true,
    },
    gateway: {
      publish: { allow: [...follow, `${s}.cmd`, `${s}.cmd.>`, `${s}.reads`, `${s}.reads.>`], deny: MANAGEMENT_DENIED },
      subscribe: { allow: [inbox('gateway')] },
    },
    replica: {
      publish: { allow: [...follow, `${s}.reads`, `${s}.reads.>`], deny: MANAGEMENT_DENIED },
      subscribe: { allow: [inbox('replica')] },
    },
    admin: { publish: { allow: ['>'] }, subscribe: { allow: ['>'] } },
  };
}

export interface NatsConfigOptions {
  stream?: string;
  /** host:port the server listens on (default 127.0.0.1:4222). */
  listen?: string;
  /** JetStream's store directory (default: the server's own). */
  storeDir?: string;
  tls?: { cert: string; key: string; ca?: string };
  /** The passwords to use (tests pass none: each is generated). */
  passwords?: Partial<Record<NatsRole, string>>;
}

export interface NatsConfig {
  /** The text of nats.conf. */
  text: string;
  users: Record<NatsRole, { user: string; password: string }>;
}

const LOOPBACK = /^(127\.\d+\.\d+\.\d+|localhost|\[?::1\]?)$/;

/** Whether `listen`'s host is a loopback address (no TLS needed: nothing crosses a network). */
export function isLoopback(listen: string): boolean {
  const host = listen.includes(']') ? listen.slice(0, listen.indexOf(']') + 1) : listen.split(':')[0]!;
  return LOOPBACK.test(host);
}

const quote = (v: string) => JSON.stringify(v);
const list = (xs: readonly string[]) => `[${xs.map(quote).join(', ')}]`;

export function natsConfig(o: NatsConfigOptions = {}): NatsConfig {
  const stream = o.stream ?? 'PM_JOURNAL';
  if (!/^[A-Za-z0-9_-]{1,64}$/.test(stream)) throw new Error(`bad stream name ${JSON.stringify(stream)}`);
  const listen = o.listen ?? '127.0.0.1:4222';
  if (!isLoopback(listen) && o.tls === undefined) {
    throw new Error(`${listen} is off loopback: name a certificate and its key (--tls-cert, --tls-key), or every password and message crosses the network in clear`);
  }
  const perms = rolePermissions(stream);
  const users = {} as NatsConfig['users'];
  const entries: string[] = [];
  for (const role of ROLES) {
    const password = o.passwords?.[role] ?? randomBytes(24).toString('base64url');
    users[role] = { user: role, password };
    const p = perms[role];
    const pub = `publish: { allow: ${list(p.publish.allow)}${p.publish.deny ? `, deny: ${list(p.publish.deny)}` : ''} }`;
    const sub = `subscribe: { allow: ${list(p.subscribe.allow)} }`;
    const resp = p.allow_responses === true ? ', allow_responses: true' : '';
    entries.push(`    { user: ${quote(role)}, password: ${quote(password)}, permissions: { ${pub}, ${sub}${resp} } }`);
  }
  const lines = [
    '# Written by tools/nats-config.ts: one user per role with the least permissions it needs (docs/cluster.md, "Running more than one node").',
    '# Holds every role\'s password: keep it mode 0600, readable by the nats-server user only.',
    `listen: ${quote(listen)}`,
    `jetstream: {${o.storeDir === undefined ? '' : ` store_dir: ${quote(o.storeDir)} `}}`,
  ];
  if (o.tls !== undefined) {
    lines.push(`tls: { cert_file: ${quote(o.tls.cert)}, key_file: ${quote(o.tls.key)}${o.tls.ca === undefined ? '' : `, ca_file: ${quote(o.tls.ca)}`} }`);
  }
  lines.push('authorization: {', '  users: [', ...entries, '  ]', '}', '');
  return { text: lines.join('\n'), users };
}

function writeSecret(path: string, text: string): void {
  writeFileSync(path, text, { mode: 0o600 });
  chmodSync(path, 0o600);
}

function main(): void {
  const { values } = parseArgs({
    options: {
      out: { type: 'string' },
      stream: { type: 'string' },
      listen: { type: 'string' },
      store: { type: 'string' },
      'tls-cert': { type: 'string' },
      'tls-key': { type: 'string' },
      'tls-ca': { type: 'string' },
    },
  });
  if (values.out === undefined) throw new Error('usage: npx tsx tools/nats-config.ts --out DIR [--stream S] [--listen host:port] [--store DIR] [--tls-cert F --tls-key F [--tls-ca F]]');
  if ((values['tls-cert'] === undefined) !== (values['tls-key'] === undefined)) throw new Error('--tls-cert and --tls-key go together');
  const tls = values['tls-cert'] === undefined ? undefined : { cert: resolve(values['tls-cert']), key: resolve(values['tls-key']!), ...(values['tls-ca'] === undefined ? {} : { ca: resolve(values['tls-ca']) }) };
  const cfg = natsConfig({ stream: values.stream, listen: values.listen, storeDir: values.store === undefined ? undefined : resolve(values.store), tls });
  const out = resolve(values.out);
  mkdirSync(out, { recursive: true, mode: 0o700 });
  writeSecret(join(out, 'nats.conf'), cfg.text);
  for (const role of ROLES) writeSecret(join(out, `${role}.env`), `NATS_USER=${cfg.users[role].user}\nNATS_PASSWORD=${cfg.users[role].password}\n`);
  process.stdout.write(
    `wrote ${join(out, 'nats.conf')} and ${ROLES.map((r) => `${r}.env`).join(', ')} (mode 0600)\n` +
      `  nats-server -c ${join(out, 'nats.conf')}\n` +
      `  a sequencer or standby:  env $(cat ${join(out, 'sequencer.env')}) ROLE=sequencer ... npm start\n` +
      `  a gateway:               env $(cat ${join(out, 'gateway.env')}) ROLE=gateway ... npm start\n` +
      `  a replica:               env $(cat ${join(out, 'replica.env')}) ROLE=replica ... npm start\n` +
      (tls === undefined ? '' : `  and on every node:       NATS_URL=tls://${values.listen ?? '127.0.0.1:4222'} NATS_CA_FILE=<the CA that signed ${tls.cert} (tools/nats-certs.ts: ca.pem)>\n`),
  );
}

runMain(import.meta.url, main);
