/**
 * A wallet's account routes beyond orders and balances (trading group, L2): its notifications (read with a
 * trading or read-only key, dropped with a trading key), its heartbeat (edge/trading/heartbeats.ts: a trading key
 * only, since a heartbeat left to lapse cancels every open order of the wallet), and its last refusals
 * (edge/refusals/wallets.ts: what X-Refusal-Reason said, for clients that hide response headers; unsigned,
 * with `address`, what that address's requests from the reader's own client address were refused for, so a
 * failing login can be diagnosed before there is a key).
 *
 * Notifications are a wallet's: the key's own, or with `signature_type` 1 or 2 its proxy wallet's or Safe's
 * (edge/auth/funders.ts), whose ids carry the type (domain/notifications.ts keyNotificationId) so that a drop,
 * which the platform client sends with ids alone, reaches the right wallet.
 *
 * Notifications are projected from the journal (projections/notifications.ts) and kept until dropped. A drop
 * is durable when answered: its removals go out with the projection writes they cover, in the flush the
 * handler asks for, and the answer waits for that commit, so a restart cannot bring a dropped one back.
 */
import { Type } from '@sinclair/typebox';
import { apiError } from '../../../domain/errors.ts';
import { keyNotificationId, parseKeyNotificationId } from '../../../domain/notifications.ts';
import { dropNotifications } from '../../../projections/notifications.ts';
import { walletNotifications } from '../../../queries/notifications.ts';
import type { AppContext } from '../../context.ts';
import { walletFor, type Funders } from '../../auth/funders.ts';
import type { Heartbeats } from '../../trading/heartbeats.ts';
import { READ_KEYS, bindRoutes, routeSpec, type AnyRoute, type RequestOf, type RouteSpec } from '../../pipeline/route.ts';
import { DropNotificationsQuery, Notification, NotificationsQuery } from '../../schemas/notifications.ts';
import type { WalletRefusals } from '../../refusals/wallets.ts';
import { RefusalsPage, RefusalsQuery } from '../../schemas/refusals.ts';

const HeartbeatBody = Type.Object({
  heartbeat_id: Type.Optional(
    Type.Union([Type.String({ maxLength: 100 }), Type.Null()], { description: 'the running heartbeat\'s id; "", null or absent starts one (or continues the running one)' }),
  ),
});
const HeartbeatReply = Type.Object({ heartbeat_id: Type.String({ description: 'the id to send with the next heartbeat' }) });

/** What the account handlers use: the projected views (and the store whose flush makes a drop durable), the key's wallets, the heartbeats. */
export interface AccountDeps {
  readonly views: AppContext['views'];
  readonly funders: Pick<Funders, 'makerOf' | 'walletsOf'>;
  readonly store: { readonly views: { readonly flushed: Promise<unknown> } };
  readonly heartbeats: Pick<Heartbeats, 'beat'>;
  readonly refusals: Pick<WalletRefusals, 'list' | 'fromPeer' | 'perWallet'>;
}

export function listNotifications(d: Pick<AccountDeps, 'views' | 'funders'>, req: RequestOf<typeof NotificationsQuery>) {
  const type = req.query.signature_type ?? 0;
  const list = walletNotifications(d.views, walletFor(d.funders, req.caller.address!, type));
  return type === 0 ? list : list.map((n) => ({ ...n, id: keyNotificationId(type as 1 | 2, n.id) }));
}

export async function dropWalletNotifications(d: Pick<AccountDeps, 'views' | 'store' | 'funders'>, req: RequestOf<typeof DropNotificationsQuery>) {
  const text = req.query.ids ?? '';
  const ids = text === '' ? undefined : text.split(',').map((s) => s.trim());
  const wallets = d.funders.walletsOf(req.caller.address!);
  // Without ids, every notification of every wallet of the key; with ids, each in the wallet it names.
  const slots: Array<number[] | undefined> = ids === undefined ? [undefined, undefined, undefined] : [[], [], []];
  for (const id of ids ?? []) {
    const at = parseKeyNotificationId(id);
    if (at === undefined) throw apiError('PM_ERR_BAD_REQUEST', { detail: `invalid notification id: ${id}` });
    slots[at.type]!.push(at.slot);
  }
  let dropped = 0;
  for (let type = 0; type < 3; type++) if (slots[type] === undefined || slots[type]!.length > 0) dropped += dropNotifications(d.views, wallets[type]!, slots[type]);
  if (dropped > 0) {
    d.views.deferral?.flush();
    await d.store.views.flushed;
  }
  return 'OK';
}

/**
 * Signed: the caller's wallet's refusals. Unsigned: those of `address` made from the caller's own client
 * address (refusals/wallets.ts), `address` required.
 */
export function listRefusals(d: Pick<AccountDeps, 'refusals'>, req: RequestOf<typeof RefusalsQuery>): RefusalsPage {
  const signed = req.caller.address;
  let entries;
  if (signed !== undefined) entries = d.refusals.list(signed);
  else if (req.query.address === undefined) throw apiError('PM_ERR_BAD_REQUEST', { detail: 'address is required without L2 headers: GET /refusals?address=0x... lists what requests from this client address naming it were refused for' });
  else entries = d.refusals.fromPeer(req.query.address.toLowerCase(), req.caller.ip);
  const data = entries.map((e) => ({ time: new Date(e.at).toISOString(), method: e.method, path: e.path, headers: [...e.headers], class: e.class, reason: e.reason }));
  return { data, count: data.length, limit: d.refusals.perWallet };
}

export function heartbeat(d: Pick<AccountDeps, 'heartbeats'>, req: RequestOf<undefined, typeof HeartbeatBody>) {
  return d.heartbeats.beat(req.caller.address!, req.body.heartbeat_id);
}

/** The table; the heartbeat's summary states the configured timeout. */
export function accountTable(timeoutSeconds: number): readonly RouteSpec<AccountDeps>[] {
  return [
    routeSpec({
      method: 'GET',
      path: '/notifications',
      group: 'trading',
      auth: 'l2',
      keys: READ_KEYS,
      summary: "The caller's wallet's notifications, oldest first: order fills (type 2), cancels (1), market resolutions (4)",
      description:
        'Kept until dropped, at most the latest 500 per wallet. Fills are told at the match; a FOK/FAK remainder is not a cancel notice. ' +
        "signature_type 1 or 2 reads the key's proxy wallet's or Safe's, whose ids are `1-<n>` or `2-<n>`.",
      query: NotificationsQuery,
      response: Type.Array(Notification),
      handler: listNotifications,
    }),
    routeSpec({
      method: 'DELETE',
      path: '/notifications',
      // Idempotent: dropping what is already gone changes nothing.
      replay: 'none',
      group: 'trading',
      auth: 'l2',
      summary: "Drop notifications of the caller's wallets by id (`ids=a,b`; `2-<n>` is its Safe's); without ids, every one of all of them",
      query: DropNotificationsQuery,
      response: Type.Literal('OK'),
      handler: dropWalletNotifications,
    }),
    routeSpec({
      method: 'GET',
      path: '/refusals',
      group: 'trading',
      auth: 'l2',
      keys: READ_KEYS,
      authOptional: true,
      summary: "The caller's wallet's last refusals (at most 100, newest first): what each request's X-Refusal-Reason header said",
      description:
        'Refusals of the auth and order checks made with one of the wallet\'s API keys or naming its address (in memory, per node, gone ' +
        'after a restart; empty under auth.explainRefusals false). Header names only, never their values. Without L2 headers, `address` ' +
        'names the wallet and only what requests from this client address were refused for is listed: a login (L1) that fails can be ' +
        'diagnosed before there is a key.',
      query: RefusalsQuery,
      response: RefusalsPage,
      handler: listRefusals,
    }),
    routeSpec({
      method: 'POST',
      path: '/v1/heartbeats',
      replay: 'memory',
      group: 'trading',
      auth: 'l2',
      summary: `Start or continue the wallet's heartbeat; silent for ${timeoutSeconds} s (heartbeats.timeoutSeconds), its open orders are all canceled`,
      description:
        'Send heartbeat_id "" (or null) to start one and the answered id afterwards; an id that is not the running one (it lapsed, its ' +
        'orders were canceled) is 400. Running heartbeats survive a restart with a full timeout from the start.',
      body: HeartbeatBody,
      response: HeartbeatReply,
      handler: heartbeat,
    }),
  ];
}

export function accountRoutes(ctx: Pick<AppContext, 'config' | 'views' | 'store' | 'heartbeats' | 'refusals' | 'auth'>): AnyRoute[] {
  const deps: AccountDeps = { views: ctx.views, funders: ctx.auth.funders, store: ctx.store, heartbeats: ctx.heartbeats, refusals: ctx.refusals };
  return bindRoutes(deps, accountTable(ctx.config.heartbeats.timeoutSeconds));
}
