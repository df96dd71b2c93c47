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
import { isIP } from 'node:net';
import { checkServerIdentity, type PeerCertificate } from 'node:tls';
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
  /**
   * cluster.natsCaFile: the PEM file of the CA that signed the server's certificate, trusted for this
   * connection only (the system's CAs and NODE_EXTRA_CA_CERTS otherwise). Naming one requires TLS.
   */
  caFile?: string;
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
 * The NATS server's TLS cannot be trusted: its certificate does not verify (no trusted CA signed it, it names
 * another host, it expired) or it offers no TLS where TLS is required. A configuration error, not an outage:
 * a node refuses to start on it (probeNats).
 */
export class NatsTlsError extends Error {}

export interface NatsTlsOption {
  caFile?: string;
  checkServerIdentity?: (host: string, cert: PeerCertificate) => Error | undefined;
}

/**
 * The nats.js client's `tls` option: set whenever TLS is required, so a server (or whoever answers on its
 * address) that offers none is refused rather than spoken to in clear. nats.js itself reads no meaning into a
 * `tls://` URL: without the option it speaks plain NATS to a server that does not ask for TLS.
 *
 * A URL naming the server by IP address: nats.js sends no server name for an address (RFC 6066 forbids one),
 * and Node then checks the certificate against "localhost", not the address dialed; the certificate is
 * checked against the URL's address instead (its IP subject alternative name, as tools/nats-certs.ts writes).
 */
export function tlsOptionOf(s: Pick<NatsSettings, 'natsUrl' | 'caFile'>): NatsTlsOption | undefined {
  const url = s.natsUrl.trim();
  if (!s.caFile && !/^tls:\/\//i.test(url)) return undefined;
  const o: NatsTlsOption = s.caFile ? { caFile: s.caFile } : {};
  let host = '';
  try {
    host = new URL(/^[a-z]+:\/\//i.test(url) ? url : `nats://${url}`).hostname.replace(/^\[(.*)\]$/, '$1');
  } catch {
    // Not a URL nats.js reads either: its connect says so.
  }
  if (isIP(host) !== 0) o.checkServerIdentity = (_name, cert) => checkServerIdentity(host, cert);
  return o;
}

// Node's codes for a certificate that does not verify (OpenSSL's X509 verify results, and the host check).
const UNTRUSTED = /^(ERR_TLS_CERT_ALTNAME_INVALID|UNABLE_TO_(GET_ISSUER_CERT|GET_ISSUER_CERT_LOCALLY|VERIFY_LEAF_SIGNATURE|DECRYPT_CERT_SIGNATURE)|SELF_SIGNED_CERT_IN_CHAIN|DEPTH_ZERO_SELF_SIGNED_CERT|CERT_\w+|INVALID_CA|INVALID_PURPOSE|HOSTNAME_MISMATCH)$/;

/**
 * Why a failed connection is a TLS trust failure (the text a node refuses to start with), undefined for any
 * other failure (unreachable, refused, timed out: an outage a node waits out).
 */
export function tlsFailureOf(err: unknown, s: Pick<NatsSettings, 'natsUrl' | 'caFile'>): string | undefined {
  const trust = s.caFile ? `the CA in cluster.natsCaFile (${s.caFile})` : 'the system\'s CAs and NODE_EXTRA_CA_CERTS (name the server\'s CA with cluster.natsCaFile / NATS_CA_FILE)';
  for (let e = err as { code?: unknown; message?: unknown; cause?: unknown } | undefined, depth = 0; e !== undefined && e !== null && depth < 5; e = e.cause as typeof e, depth++) {
    if (typeof e.code === 'string' && UNTRUSTED.test(e.code)) {
      return `the NATS server's certificate at ${s.natsUrl} is not trusted (${e.code}: ${String(e.message)}); this node trusts ${trust}`;
    }
    if (typeof e.message === 'string' && /does not support 'tls'/.test(e.message)) {
      return `the NATS server at ${s.natsUrl} offers no TLS, and this node requires it (a tls:// NATS_URL or cluster.natsCaFile): start nats-server with the certificate tools/nats-config.ts names (--tls-cert, --tls-key)`;
    }
  }
  return undefined;
}

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
      const nc = await connect({ ...connectOptions(s), name, maxReconnectAttempts: -1, reconnectTimeWait: 250, timeout: 2000, noAsyncTraces: true });
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
      // Past start (probeNats refused an untrusted server then), a certificate that stopped verifying is waited
      // out like an outage, the node serving what it has, but said for what it is.
      const tls = tlsFailureOf(err, s);
      if (!warned) {
        if (tls !== undefined) log.error({ natsUrl: s.natsUrl }, `${tls}; retrying`);
        else log.warn({ err, natsUrl: s.natsUrl }, 'cannot reach NATS; retrying');
      }
      warned = true;
      await new Promise((r) => setTimeout(r, 500));
    }
  }
}

/** What every connection of a node's sets: the server, the credentials, its inbox prefix, TLS. */
function connectOptions(s: NatsSettings) {
  const tls = tlsOptionOf(s);
  return {
    servers: s.natsUrl,
    inboxPrefix: inboxPrefixOf(s.user),
    ...(s.user ? { user: s.user, pass: s.password ?? '' } : {}),
    ...(tls === undefined ? {} : { tls }),
  };
}

/**
 * One connection attempt at start, before anything opens a link: a server whose TLS this node cannot trust
 * (see tlsFailureOf) is a configuration error, thrown as NatsTlsError, where openNatsLink would retry for ever
 * behind a node that looks started. A server that cannot be reached is not an error here: a node may start
 * before NATS does, and its links wait for it.
 */
export async function probeNats(s: NatsSettings, timeoutMs = 2000): Promise<void> {
  let nc: NatsConnection;
  try {
    nc = await connect({ ...connectOptions(s), name: 'pm-probe', maxReconnectAttempts: 0, timeout: timeoutMs, noAsyncTraces: true });
  } catch (err) {
    const tls = tlsFailureOf(err, s);
    if (tls !== undefined) throw new NatsTlsError(tls, { cause: err });
    return;
  }
  await nc.close();
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
