/**
 * replication/nats-link.ts's TLS rules: when a node requires TLS of its NATS server (a `tls://` URL, a CA
 * file), that a server it cannot reach is not a reason to refuse a start while one it cannot trust is, and
 * that a link opened past start retries an untrusted server while saying why. The nodes over TLS end to end:
 * test/node/cluster-tls.test.ts. The real-server cases skip, with the reason, where nats-server or openssl is
 * missing; failing under CI.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { pino } from 'pino';
import { NatsTlsError, openNatsLink, probeNats, tlsOptionOf } from '../../src/replication/nats-link.ts';
import { makeNatsCerts } from '../../tools/nats-certs.ts';
import { freePort, startNatsServer } from '../../tools/nats-server.ts';
import { natsTlsSkip } from '../fixtures/cluster.ts';
import { tempDir } from '../fixtures/temp-dirs.ts';

const skip = natsTlsSkip();

test('TLS is required of the server for a tls:// URL or a named CA, and only then', () => {
  assert.deepEqual(tlsOptionOf({ natsUrl: 'TLS://nats.internal:4222' }), {});
  assert.deepEqual(tlsOptionOf({ natsUrl: 'nats://nats.internal:4222', caFile: '/etc/ca.pem' }), { caFile: '/etc/ca.pem' });
  assert.equal(tlsOptionOf({ natsUrl: 'tls://10.0.0.5:4222', caFile: '/etc/ca.pem' })?.caFile, '/etc/ca.pem');
  assert.ok(tlsOptionOf({ natsUrl: 'tls://[::1]:4222' }) !== undefined);
  assert.equal(tlsOptionOf({ natsUrl: 'nats://127.0.0.1:4222' }), undefined);
  assert.equal(tlsOptionOf({ natsUrl: 'nats://127.0.0.1:4222', caFile: '' }), undefined);
});

test('a server not reachable at start is no reason to refuse it (a node may start before NATS does)', async () => {
  const port = await freePort();
  await probeNats({ natsUrl: `tls://127.0.0.1:${port}`, user: 'replica', password: 'x' }, 1000);
  await probeNats({ natsUrl: `nats://127.0.0.1:${port}`, user: 'replica', password: 'x' }, 1000);
});

test('an untrusted server: refused at start with the reason, and a link opened past start retries it saying why', { skip, timeout: 60_000 }, async () => {
  const certs = makeNatsCerts(tempDir('pm-nats-tls-'), ['127.0.0.1']);
  const nats = await startNatsServer({ secure: true, tls: { cert: certs.cert, key: certs.key } });
  try {
    const { natsUser: user, natsPassword: password } = nats.credentials('replica');
    const untrusted = { natsUrl: nats.url, user, password };
    await assert.rejects(probeNats(untrusted), (e: Error) => e instanceof NatsTlsError && /certificate at tls:\/\/127\.0\.0\.1:\d+ is not trusted/.test(e.message));
    // The CA named: trusted (the certificate names 127.0.0.1 only: the address is what is checked, not "localhost",
    // as nats.js and Node would alone), and another host's name in the URL is refused as untrusted.
    await probeNats({ ...untrusted, caFile: certs.ca });
    await assert.rejects(probeNats({ ...untrusted, natsUrl: `tls://localhost:${nats.port}`, caFile: certs.ca }), (e: Error) => e instanceof NatsTlsError && /ERR_TLS_CERT_ALTNAME_INVALID/.test(e.message));

    const lines: Array<{ level: number; msg: string }> = [];
    const log = pino({ level: 'info' }, { write: (l: string) => void lines.push(JSON.parse(l) as { level: number; msg: string }) });
    let attempts = 0;
    const link = await openNatsLink(untrusted, log, () => attempts++ >= 2, 'pm-test');
    assert.equal(link, undefined, 'no connection to a server it cannot trust');
    assert.ok(attempts >= 2, 'it retried');
    const errors = lines.filter((l) => l.level >= 50);
    assert.equal(errors.length, 1, `said once: ${JSON.stringify(lines)}`);
    assert.match(errors[0]!.msg, /is not trusted .*NATS_CA_FILE.*; retrying$/);
    const trusted = await openNatsLink({ ...untrusted, caFile: certs.ca }, log, () => false, 'pm-test');
    assert.ok(trusted !== undefined);
    await trusted.close();
  } finally {
    await nats.stop();
  }
});
