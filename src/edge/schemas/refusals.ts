/**
 * GET /refusals: the caller's wallet's last refusals as X-Refusal-Reason told them (edge/refusals/wallets.ts),
 * for clients that never show a response header; unsigned, with `address`, what requests from the reader's
 * own client address naming that address were refused for. Header names only, never their values.
 */
import { Type, type Static } from '@sinclair/typebox';
import { REFUSAL_CLASSES } from '../refusals/reason.ts';

export const RefusalItem = Type.Object({
  time: Type.String({ description: 'when it was refused (ISO 8601, UTC, milliseconds)' }),
  method: Type.String({ description: 'the HTTP method; WS for the user channel' }),
  path: Type.String({ description: 'the path, without the query string' }),
  headers: Type.Array(Type.String(), { description: 'the names of the headers the request carried (lowercase), never their values' }),
  class: Type.Union(
    REFUSAL_CLASSES.map((c) => Type.Literal(c)),
    { description: 'the kind of mistake (also the /metrics label of refusals_total)' },
  ),
  reason: Type.String({ description: 'what was wrong and what was expected: the X-Refusal-Reason header as sent' }),
});
export type RefusalItem = Static<typeof RefusalItem>;

export const RefusalsQuery = Type.Object({
  address: Type.Optional(
    Type.String({ pattern: '^0x[0-9a-fA-F]{40}$', description: 'without L2 headers: the wallet whose refusals from this client address to list (required then)' }),
  ),
});

export const RefusalsPage = Type.Object({
  data: Type.Array(RefusalItem, { description: 'newest first' }),
  count: Type.Integer(),
  limit: Type.Integer({ description: 'most refusals kept per wallet' }),
});
export type RefusalsPage = Static<typeof RefusalsPage>;
