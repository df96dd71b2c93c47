/**
 * What a follower starts from (replication/snapshot-install.ts startKindFor): by default (`auto`) a replica or
 * gateway the state, a standby the whole store (it may not take the lease before it holds the history); what
 * cluster.followerStart names, whatever the role. The install itself, over a real nats-server:
 * snapshot-shipper.test.ts.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { startKindFor } from '../../src/replication/snapshot-install.ts';

test('by default a replica or gateway starts from the state and a standby from the whole store; a named kind for every role', () => {
  assert.equal(startKindFor('replica', 'auto'), 'state');
  assert.equal(startKindFor('gateway', 'auto'), 'state');
  assert.equal(startKindFor('standby', 'auto'), 'store');
  for (const role of ['replica', 'gateway', 'standby']) {
    assert.equal(startKindFor(role, 'state'), 'state');
    assert.equal(startKindFor(role, 'store'), 'store');
  }
});
