/**
 * What a follower starts from (replication/snapshot-install.ts startKindFor): a replica or gateway what
 * cluster.followerStart says; a standby the whole store whatever it says, since its store may become the
 * sequencer's. The install itself, over a real nats-server: snapshot-shipper.test.ts.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { startKindFor } from '../../src/replication/snapshot-install.ts';

test('a standby starts from the whole store whatever followerStart says; a replica or gateway from what it says', () => {
  assert.equal(startKindFor('standby', 'state'), 'store');
  assert.equal(startKindFor('replica', 'state'), 'state');
  assert.equal(startKindFor('gateway', 'state'), 'state');
  assert.equal(startKindFor('replica', 'store'), 'store');
});
