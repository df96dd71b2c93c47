/**
 * The NATS side of replication: one connection per process (reconnecting for ever: a node outlives its
 * NATS server's restarts), the journal stream's definition, and the stream position of a replication
 * sequence. Only replication/ imports the NATS clients, and app.ts loads replication/ only for the
 * sequencer and replica roles, so ROLE=single never loads them.
 *
 * The stream holds one message per replication-log record, subject `<stream lowercased>.batches`, and its
 * stream sequence equals the record's rseq: the publisher sends rseq n with `expect.lastSequence = n - 1`
 * (the server refuses anything else), so a replica that applied rseq n resumes at stream sequence n + 1.
 */
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { jetstream, jetstreamManager, RetentionPolicy, StorageType, type JetStreamClient, type JetStreamManager } from '@nats-io/jetstream';
import type { Logger } from '../runtime/log.ts';
import type { ClusterKeys } from './seal.ts';

/** How a node reaches NATS. */
export interface NatsSettings {
  natsUrl: string;
  /**
   * The NATS user and password to connect as (tools/nats-config.ts makes one per role, with the least
   * permissions it needs). Without a user a node refuses to connect unless `insecure` (a test's set-up).
   */
  user?: string;
  password?: string;
  /** cluster.insecure: a connection with no credentials is allowed (tests only; logged loudly at start). */
  insecure?: boolean;
}

export interface StreamSettings extends NatsSettings {
  stream: string;
  /** JetStream replication factor (1 on one server, 3 on a cluster). */
  replicas: number;
  /** The cluster's purpose keys (seal.ts): every record, command, answer and lease value is authenticated with them. */
  keys: ClusterKeys;
}

export class InsecureNatsError extends Error {}

/**
 * Where this connection's request replies arrive: `_INBOX_<user>` with a user (tools/nats-config.ts lets each
 * user subscribe to its own prefix only, so no other role reads its answers), NATS's default without one.
 */
export const inboxPrefixOf = (user: string | undefined) => (user ? `_INBOX_${user}` : '_INBOX');

/** Refuses settings that would connect with no credentials outside a test (cluster.insecure). */
export function checkCredentials(s: NatsSettings): void {
  if (!s.user && s.insecure !== true) {
    throw new InsecureNatsError(
      'a clustered node needs NATS credentials (cluster.natsUser / NATS_USER and its password: tools/nats-config.ts writes them); ' +
        'only a test may connect without any (cluster.insecure: true or NATS_INSECURE=1)',
    );
  }
}

export const subjectOf = (stream: string) => `${stream.toLowerCase()}.batches`;

export interface NatsLink {
  readonly nc: NatsConnection;
  readonly js: JetStreamClient;
  readonly jsm: JetStreamManager;
  close(): Promise<void>;
}

/**
 * Connects (retrying until `isClosed()`), reconnecting without limit afterwards. Resolves undefined when
 * closed before a first connection.
 */
export async function openNatsLink(s: NatsSettings, log: Logger, isClosed: () => boolean, name: string): Promise<NatsLink | undefined> {
  checkCredentials(s);
  let warned = false;
  for (;;) {
    if (isClosed()) return undefined;
    try {
      // noAsyncTraces: otherwise the client builds an Error (a stack capture) for every publish's acknowledgement
      // request, a few percent of a sequencer's main thread under load.
      const credentials = s.user ? { user: s.user, pass: s.password ?? '' } : {};
      const nc = await connect({ servers: s.natsUrl, name, maxReconnectAttempts: -1, reconnectTimeWait: 250, timeout: 2000, noAsyncTraces: true, inboxPrefix: inboxPrefixOf(s.user), ...credentials });
      log.info({ natsUrl: s.natsUrl }, 'connected to NATS');
      void (async () => {
        for await (const st of nc.status()) {
          if (st.type === 'disconnect') log.warn({ natsUrl: s.natsUrl }, 'NATS connection lost; reconnecting');
          else if (st.type === 'reconnect') log.info({ natsUrl: s.natsUrl }, 'NATS connection back');
        }
      })();
      const jsm = await jetstreamManager(nc, { timeout: 5000 });
      return { nc, js: jetstream(nc, { timeout: 5000 }), jsm, close: () => nc.close() };
    } catch (err) {
      if (!warned) log.warn({ err, natsUrl: s.natsUrl }, 'cannot reach NATS; retrying');
      warned = true;
      await new Promise((r) => setTimeout(r, 500));
    }
  }
}

/** Creates the stream if missing (file storage, limits retention: kept whole, the replicas' catch-up). */
export async function ensureStream(jsm: JetStreamManager, s: Pick<StreamSettings, 'stream' | 'replicas'>): Promise<void> {
  try {
    await jsm.streams.info(s.stream);
    return;
  } catch (err) {
    if (!/not found/i.test((err as Error).message)) throw err;
  }
  await jsm.streams.add({
    name: s.stream,
    subjects: [subjectOf(s.stream)],
    storage: StorageType.File,
    retention: RetentionPolicy.Limits,
    num_replicas: s.replicas,
    // Two minutes (nanoseconds): a batch republished within it is acknowledged as a duplicate; later ones
    // are refused by their expected last sequence instead, which the publisher reads as "already there".
    duplicate_window: 120_000_000_000,
  });
}

/** The last rseq the stream holds (its last stream sequence), 0 for an empty or missing stream. */
export async function streamLastRseq(jsm: JetStreamManager, stream: string): Promise<number> {
  try {
    const info = await jsm.streams.info(stream);
    return info.state.last_seq;
  } catch (err) {
    if (/not found/i.test((err as Error).message)) return 0;
    throw err;
  }
}

/** The bytes of the stream's record `rseq` (its stream sequence), undefined when the stream has none. */
export async function streamRecord(jsm: JetStreamManager, stream: string, rseq: number): Promise<Uint8Array | undefined> {
  if (rseq < 1) return undefined;
  try {
    const m = await jsm.streams.getMessage(stream, { seq: rseq });
    return m === null ? undefined : m.data;
  } catch (err) {
    if (/not found|no message/i.test((err as Error).message)) return undefined;
    throw err;
  }
}
