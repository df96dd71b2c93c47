/**
 * Makes the certificates a NATS server of ours serves TLS with (docs/decisions/scale-out.md, "The cluster's threat
 * model", what a deployment must still do): a private CA and one server certificate it signed, for the names and
 * addresses the nodes dial, by the `openssl` program (Debian's `openssl` package). tools/nats-config.ts then
 * names them (`--tls-cert cert.pem --tls-key key.pem`) and every node trusts the CA (cluster.natsCaFile /
 * NATS_CA_FILE).
 *
 *   npx tsx tools/nats-certs.ts --out /etc/pm-nats/tls --host 10.0.0.5 [--host nats.internal ...] [--days 825]
 *
 * writes `<out>/ca.pem` (the CA's certificate: what the nodes trust), `<out>/cert.pem` and `<out>/key.pem` (the
 * server's; the key mode 0600). The CA's own key lives only in a temporary directory while it signs and is
 * deleted: nothing can issue another certificate the nodes would trust, and a new server certificate means a
 * new CA (run this again, hand the nodes the new ca.pem). The tests make theirs the same way, on 127.0.0.1.
 *
 * Each `--host` goes into the certificate's subject alternative names (an IP address as `IP:`, a name as `DNS:`):
 * a node checks the address or name of its NATS_URL against them.
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { runMain } from './run-main.ts';

export interface NatsCerts {
  /** The CA's certificate (PEM): what a node trusts. */
  ca: string;
  /** The server's certificate and its key (PEM files). */
  cert: string;
  key: string;
}

/** Whether the `openssl` program can be run (the TLS tests skip with "openssl not on PATH" otherwise). */
export function opensslAvailable(): boolean {
  const r = spawnSync('openssl', ['version'], { stdio: 'ignore' });
  return r.error === undefined && r.status === 0;
}

function openssl(args: string[], cwd: string): void {
  const r = spawnSync('openssl', args, { cwd, encoding: 'utf8' });
  if (r.error !== undefined) throw new Error(`openssl could not be run (Debian's openssl package): ${r.error.message}`);
  if (r.status !== 0) throw new Error(`openssl ${args[0]} failed: ${r.stderr.trim()}`);
}

/** The subjectAltName entries of `hosts`: addresses as IP, names as DNS. */
export function altNames(hosts: readonly string[]): string {
  if (hosts.length === 0) throw new Error('name at least one host (--host): the address or name the nodes dial');
  return hosts
    .map((h) => {
      const bare = h.replace(/^\[(.*)\]$/, '$1');
      if (isIP(bare) !== 0) return `IP:${bare}`;
      if (!/^[A-Za-z0-9*]([A-Za-z0-9-]*[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?)*$/.test(h)) throw new Error(`not a host name or address: ${JSON.stringify(h)}`);
      return `DNS:${h}`;
    })
    .join(',');
}

/**
 * Writes ca.pem, cert.pem and key.pem into `out` (made if missing): a new P-256 CA and a server certificate
 * for `hosts` it signed, valid `days` days.
 */
export function makeNatsCerts(out: string, hosts: readonly string[], days = 825): NatsCerts {
  const san = altNames(hosts);
  mkdirSync(out, { recursive: true, mode: 0o700 });
  const work = mkdtempSync(join(tmpdir(), 'pm-nats-ca-'));
  try {
    const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes'];
    openssl(['req', '-x509', ...ec, '-keyout', 'ca-key.pem', '-out', 'ca.pem', '-days', String(days), '-subj', '/CN=pm NATS CA',
      '-addext', 'basicConstraints=critical,CA:TRUE,pathlen:0', '-addext', 'keyUsage=critical,keyCertSign,cRLSign'], work);
    openssl(['req', ...ec, '-keyout', 'key.pem', '-out', 'server.csr', '-subj', `/CN=${hosts[0]}`], work);
    writeFileSync(join(work, 'server.ext'), `subjectAltName=${san}\nbasicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=serverAuth\n`);
    openssl(['x509', '-req', '-in', 'server.csr', '-CA', 'ca.pem', '-CAkey', 'ca-key.pem', '-CAcreateserial', '-out', 'cert.pem', '-days', String(days), '-extfile', 'server.ext'], work);
    const files = { ca: join(out, 'ca.pem'), cert: join(out, 'cert.pem'), key: join(out, 'key.pem') };
    copyFileSync(join(work, 'ca.pem'), files.ca);
    copyFileSync(join(work, 'cert.pem'), files.cert);
    copyFileSync(join(work, 'key.pem'), files.key);
    chmodSync(files.key, 0o600);
    return files;
  } finally {
    // The CA's key with it: see the header.
    rmSync(work, { recursive: true, force: true });
  }
}

function main(): void {
  const { values } = parseArgs({ options: { out: { type: 'string' }, host: { type: 'string', multiple: true }, days: { type: 'string' } } });
  if (values.out === undefined || values.host === undefined) throw new Error('usage: npx tsx tools/nats-certs.ts --out DIR --host ADDRESS_OR_NAME [--host ...] [--days N]');
  const days = values.days === undefined ? 825 : Number(values.days);
  if (!Number.isInteger(days) || days < 1) throw new Error(`--days: a whole number of days, not ${JSON.stringify(values.days)}`);
  const c = makeNatsCerts(resolve(values.out), values.host, days);
  process.stdout.write(
    `wrote ${c.ca} (the CA: every node trusts it), ${c.cert} and ${c.key} (the server's, key mode 0600); the CA's key is deleted\n` +
      `  npx tsx tools/nats-config.ts --out DIR --listen ${values.host[0]}:4222 --tls-cert ${c.cert} --tls-key ${c.key}\n` +
      `  each node: NATS_URL=tls://${values.host[0]}:4222 NATS_CA_FILE=${c.ca}\n`,
  );
}

runMain(import.meta.url, main);
