/**
 * The operator's page, through the admin API with the ADMIN_TOKEN typed here (kept in page memory, never
 * shown): the test clock (the exchange's time, frozen or running, advanced by a step or to a time), the
 * snapshots beside it (save the whole exchange under a name, revert to one, delete), the
 * sandbox (maintenance window, fault scenario, closed-only wallets, trades settling), wallet funds
 * (deposit, withdraw, balances), and a market's status and resolution. Every answer, and every refusal with
 * its list of problems, is shown as the API gives it.
 */
import type { Static } from '@sinclair/typebox';
import { useEffect, useMemo, useState } from 'preact/hooks';
import type { WalletBalances } from '../../../src/edge/schemas/admin.ts';
import type { MarketBook, MarketsPage } from '../../../src/edge/schemas/catalog.ts';
import type { ClosedOnlyReply, SandboxState } from '../../../src/edge/schemas/sandbox.ts';
import type { AdvanceReply, ClockState } from '../../../src/edge/schemas/test-controls.ts';
import type { RevertReply, SnapshotInfo, SnapshotList } from '../../../src/edge/schemas/snapshots.ts';
import { ApiError, call, messageOf } from '../api.ts';
import { ErrorText, Section, useLoad } from '../components/common.tsx';
import { amount, short, time } from '../format.ts';
import { href } from '../router.ts';
import { adminCall, adminToken, useCell } from '../session.ts';
import { END_CURSOR, statusOf } from './markets.tsx';

/** The outcome of one admin action: the API's error (with its `errors`) or a note of what changed. */
interface Outcome {
  error: string;
  errors?: { path: string; message: string }[];
  note?: string;
}

function outcomeOf(e: unknown): Outcome {
  return e instanceof ApiError ? { error: e.text, errors: e.errors } : { error: messageOf(e) };
}

function Result({ o }: { o: Outcome }) {
  return (
    <>
      <ErrorText error={o.error} errors={o.errors} />
      {o.note && (
        <p class="note" role="status">
          {o.note}
        </p>
      )}
    </>
  );
}

function TokenForm() {
  const [text, setText] = useState('');
  const [o, setO] = useState<Outcome>({ error: '' });
  const use = async (e: Event) => {
    e.preventDefault();
    const token = text;
    // Out of the field at once: from here on the token lives in session.ts only, once the API accepted it.
    setText('');
    try {
      await call('/admin/sandbox', { headers: { authorization: `Bearer ${token}` } });
      adminToken.set(token);
    } catch (err) {
      setO(outcomeOf(err));
    }
  };
  return (
    <form onSubmit={use} aria-label="Admin token" class="filters">
      <label>
        ADMIN_TOKEN
        <input type="password" name="admin-token" autoComplete="off" value={text} onInput={(e) => setText(e.currentTarget.value)} required />
      </label>
      <button type="submit">Use token</button>
      <Result o={o} />
      <p class="muted small">The admin API exists only when the service was started with ADMIN_TOKEN set. The token stays in this page's memory.</p>
    </form>
  );
}

function Sandbox() {
  const [version, setVersion] = useState(0);
  const s = useLoad(String(version), (signal) => adminCall<Static<typeof SandboxState>>('/admin/sandbox', { signal }));
  useEffect(() => {
    const t = window.setInterval(() => setVersion((v) => v + 1), 5000);
    return () => window.clearInterval(t);
  }, []);
  const [duration, setDuration] = useState('90');
  const [postOnly, setPostOnly] = useState('120');
  const [faults, setFaults] = useState(JSON.stringify({ seed: 7, ackLatency: { distribution: 'uniform', minMs: 50, maxMs: 800, share: 0.5 } }, null, 2));
  const [o, setO] = useState<Outcome>({ error: '' });

  const act = async (what: () => Promise<unknown>, note: string) => {
    try {
      await what();
      setO({ error: '', note });
      setVersion((v) => v + 1);
    } catch (e) {
      setO(outcomeOf(e));
    }
  };
  const startWindow = (e: Event) => {
    e.preventDefault();
    void act(
      () => adminCall('/admin/sandbox/maintenance', { method: 'POST', body: { durationSeconds: Number(duration), postOnlySeconds: Number(postOnly) } }),
      'Maintenance window started',
    );
  };
  const setScenario = (e: Event) => {
    e.preventDefault();
    let body: unknown;
    try {
      body = JSON.parse(faults);
    } catch (err) {
      setO({ error: `the scenario is not JSON: ${(err as Error).message}` });
      return;
    }
    void act(() => adminCall('/admin/sandbox/faults', { method: 'PUT', body }), 'Fault scenario set');
  };

  const st = s.data;
  return (
    <>
      <ErrorText error={s.error} />
      {st && (
        <dl class="facts" data-testid="sandbox-state">
          <dt>Maintenance</dt>
          <dd data-phase={st.maintenance.phase}>
            {st.maintenance.phase}
            {st.maintenance.until ? ` until ${time(Date.parse(st.maintenance.until))}` : ''}
            {st.maintenance.nextScheduled ? `; next scheduled ${time(Date.parse(st.maintenance.nextScheduled))}` : ''}
          </dd>
          <dt>Faults</dt>
          <dd>
            {st.faults.scenario ? (
              <>
                <code>{JSON.stringify(st.faults.scenario)}</code> ({st.faults.source}, {st.faults.requests} requests seen; injected: {st.faults.injected.latency} delays,{' '}
                {st.faults.injected.error500Applied + st.faults.injected.error500NotApplied} × 500, {st.faults.injected.error503} × 503)
              </>
            ) : (
              'off'
            )}
          </dd>
          <dt>Closed-only wallets</dt>
          <dd>{st.closedOnly.length === 0 ? 'none' : st.closedOnly.map((a) => short(a)).join(', ')}</dd>
          <dt>Trades settling</dt>
          <dd>
            {st.trades.settling.MATCHED} matched, {st.trades.settling.MINED} mined, {st.trades.settling.RETRYING} retrying
          </dd>
        </dl>
      )}
      <form class="filters" onSubmit={startWindow} aria-label="Maintenance window">
        <label>
          Window (s)
          <input name="duration" inputMode="numeric" value={duration} onInput={(e) => setDuration(e.currentTarget.value)} />
        </label>
        <label>
          Post-only after (s)
          <input name="post-only" inputMode="numeric" value={postOnly} onInput={(e) => setPostOnly(e.currentTarget.value)} />
        </label>
        <button type="submit">Start maintenance window</button>
        <button type="button" onClick={() => act(() => adminCall('/admin/sandbox/maintenance', { method: 'DELETE' }), 'Maintenance ended')}>
          End it now
        </button>
      </form>
      <form onSubmit={setScenario} aria-label="Fault scenario">
        <label class="block">
          Fault scenario (JSON: ackLatency, error500, error503, seed)
          <textarea name="faults" rows={5} spellcheck={false} value={faults} onInput={(e) => setFaults(e.currentTarget.value)} />
        </label>
        <div class="row">
          <button type="submit">Set scenario</button>
          <button type="button" onClick={() => act(() => adminCall('/admin/sandbox/faults', { method: 'DELETE' }), 'Faults off')}>
            Turn faults off
          </button>
        </div>
      </form>
      <Result o={o} />
    </>
  );
}

/**
 * One admin action at a time: `busy` while it runs, its note or error in `o`, then `reload` (after an error
 * too: a failed revert or advance may still have moved what the panel shows).
 */
function useAction(reload: () => void) {
  const [busy, setBusy] = useState(false);
  const [o, setO] = useState<Outcome>({ error: '' });
  const act = async (what: () => Promise<string>) => {
    setBusy(true);
    try {
      setO({ error: '', note: await what() });
    } catch (e) {
      setO(outcomeOf(e));
    } finally {
      setBusy(false);
      reload();
    }
  };
  return { busy, o, act };
}

const STEPS = [
  ['+1 min', 60],
  ['+1 hour', 3600],
  ['+1 day', 86_400],
] as const;

/**
 * The test clock (GET/PUT /admin/clock, POST /admin/clock/advance): read every second, so a running clock is
 * seen to run and a frozen one to stand. A service whose test controls are off answers 404: the panel says so.
 */
function TestClock() {
  const [version, setVersion] = useState(0);
  const c = useLoad(String(version), (signal) => adminCall<Static<typeof ClockState>>('/admin/clock', { signal }));
  useEffect(() => {
    const t = window.setInterval(() => setVersion((v) => v + 1), 1000);
    return () => window.clearInterval(t);
  }, []);
  const [seconds, setSeconds] = useState('600');
  const [to, setTo] = useState('');
  const { busy, o, act } = useAction(() => setVersion((v) => v + 1));
  const advance = (body: { seconds: number } | { to: string }) =>
    act(async () => {
      const r = await adminCall<Static<typeof AdvanceReply>>('/admin/clock/advance', { method: 'POST', body });
      return `Advanced to ${time(Date.parse(r.advanced.to))}: ${r.advanced.timers} timers fired on the way, in ${r.advanced.tookMs} ms`;
    });
  const mode = (frozen: boolean) =>
    act(async () => {
      await adminCall('/admin/clock', { method: 'PUT', body: { frozen } });
      return frozen ? 'Clock frozen' : 'Clock running';
    });

  if (c.error !== '' && c.data === undefined && /not found/.test(c.error)) {
    return <p class="muted">The test controls are off on this service (sandbox.testControls).</p>;
  }
  const st = c.data;
  return (
    <>
      {st && (
        <dl class="facts" data-testid="clock-state" data-frozen={String(st.frozen)} data-now={st.nowMs}>
          <dt>Exchange time</dt>
          <dd>
            {new Date(st.nowMs).toISOString().replace('T', ' ').slice(0, 19)} UTC{' '}
            <span class={`tag ${st.frozen ? 'status-paused' : 'status-open'}`}>{st.frozen ? 'frozen' : 'running'}</span>
          </dd>
          <dt>Machine time</dt>
          <dd>{st.frozen ? 'apart: the exchange stands still' : st.offsetMs === 0 ? 'the same' : `${st.offsetMs > 0 ? 'ahead' : 'behind'} by ${Math.round(Math.abs(st.offsetMs) / 1000)} s`}</dd>
        </dl>
      )}
      <div class="row" role="group" aria-label="Clock">
        {st?.frozen ? (
          <button type="button" onClick={() => mode(false)} disabled={busy}>
            Let it run
          </button>
        ) : (
          <button type="button" onClick={() => mode(true)} disabled={busy}>
            Freeze
          </button>
        )}
        {STEPS.map(([label, s]) => (
          <button key={label} type="button" onClick={() => advance({ seconds: s })} disabled={busy}>
            {label}
          </button>
        ))}
      </div>
      <form
        class="filters"
        aria-label="Advance the clock"
        onSubmit={(e) => {
          e.preventDefault();
          void advance(to.trim() !== '' ? { to: to.trim() } : { seconds: Number(seconds) });
        }}
      >
        <label>
          By (s)
          <input name="advance-seconds" inputMode="decimal" value={seconds} onInput={(e) => setSeconds(e.currentTarget.value)} />
        </label>
        <label>
          Or to (ISO 8601)
          <input name="advance-to" value={to} onInput={(e) => setTo(e.currentTarget.value)} placeholder="2027-01-05T12:00:00Z" spellcheck={false} />
        </label>
        <button type="submit" disabled={busy}>
          Advance
        </button>
      </form>
      <p class="muted small">Everything due on the way happens in order, each at its time: GTD expiries, trade settlement, heartbeats, maintenance windows, samples, scenario events.</p>
      <ErrorText error={c.data === undefined ? '' : c.error} />
      <Result o={o} />
    </>
  );
}

/**
 * The snapshots (POST/GET /admin/snapshots, POST /admin/snapshots/{name}/revert, DELETE): save the exchange
 * under a name, revert to one (the service restarts on it in place: this page's own requests during it may
 * be answered 503), delete. A service whose test controls are off answers 404: the panel says so.
 */
function Snapshots() {
  const [version, setVersion] = useState(0);
  const list = useLoad(String(version), (signal) => adminCall<Static<typeof SnapshotList>>('/admin/snapshots', { signal }));
  const [name, setName] = useState('');
  const { busy, o, act } = useAction(() => setVersion((v) => v + 1));
  const save = () =>
    act(async () => {
      const s = await adminCall<Static<typeof SnapshotInfo>>('/admin/snapshots', { method: 'POST', body: name.trim() === '' ? {} : { name: name.trim() } });
      setName('');
      return `Saved ${s.name} at journal seq ${s.seq} (${amount(s.bytes / 1024)} KiB)`;
    });
  const revert = (n: string) =>
    act(async () => {
      const r = await adminCall<Static<typeof RevertReply>>(`/admin/snapshots/${encodeURIComponent(n)}/revert`, { method: 'POST' });
      return `Reverted to ${r.snapshot.name} (journal seq ${r.snapshot.seq}) in ${Math.round(r.tookMs)} ms`;
    });
  const remove = (n: string) =>
    act(async () => {
      await adminCall(`/admin/snapshots/${encodeURIComponent(n)}`, { method: 'DELETE' });
      return `Deleted ${n}`;
    });

  if (list.error !== '' && list.data === undefined && /not found/.test(list.error)) {
    return <p class="muted">The test controls are off on this service (sandbox.testControls).</p>;
  }
  const snaps = list.data?.snapshots ?? [];
  return (
    <>
      <form
        class="filters"
        aria-label="Save a snapshot"
        onSubmit={(e) => {
          e.preventDefault();
          void save();
        }}
      >
        <label>
          Name (optional)
          <input name="snapshot-name" value={name} onInput={(e) => setName(e.currentTarget.value)} placeholder="a-z, 0-9, _ and -" spellcheck={false} />
        </label>
        <button type="submit" disabled={busy}>
          Save snapshot
        </button>
      </form>
      {snaps.length === 0 ? (
        <p class="muted small">No snapshot yet{list.data ? ` (at most ${list.data.max})` : ''}.</p>
      ) : (
        <table class="snapshots" data-testid="snapshots">
          <thead>
            <tr>
              <th>Name</th>
              <th>Journal seq</th>
              <th>Saved</th>
              <th />
            </tr>
          </thead>
          <tbody>
            {snaps.map((s) => (
              <tr key={s.name} data-snapshot={s.name}>
                <td>{s.name}</td>
                <td>{s.seq}</td>
                <td>{time(Date.parse(s.createdAt))}</td>
                <td>
                  <button type="button" onClick={() => revert(s.name)} disabled={busy}>
                    Revert
                  </button>{' '}
                  <button type="button" class="link" onClick={() => remove(s.name)} disabled={busy}>
                    Delete
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <p class="muted small">A revert puts the whole exchange back (books, orders, balances, keys, catalog, clock) in place: open streams are closed (1012) and reconnect.</p>
      <ErrorText error={list.data === undefined ? '' : list.error} />
      <Result o={o} />
    </>
  );
}

function Funds() {
  const [address, setAddress] = useState('');
  const [amountText, setAmount] = useState('100');
  const [balances, setBalances] = useState<WalletBalances | undefined>(undefined);
  const [closedOnly, setClosedOnly] = useState(false);
  const [o, setO] = useState<Outcome>({ error: '' });
  const path = `/admin/wallets/${encodeURIComponent(address.trim())}`;

  const run = async (what: () => Promise<WalletBalances | undefined>, note: string) => {
    try {
      const b = await what();
      if (b) setBalances(b);
      setO({ error: '', note });
    } catch (e) {
      setO(outcomeOf(e));
    }
  };
  const move = (op: 'deposit' | 'withdraw') => (e?: Event) => {
    e?.preventDefault();
    void run(() => adminCall<WalletBalances>(`${path}/${op}`, { method: 'POST', body: { amount: amountText.trim() } }), `${op === 'deposit' ? 'Deposited' : 'Withdrew'} ${amountText} USDC`);
  };
  return (
    <>
      <form class="filters" onSubmit={move('deposit')} aria-label="Wallet funds">
        <label>
          Wallet address
          <input name="wallet-address" value={address} onInput={(e) => setAddress(e.currentTarget.value)} placeholder="0x…" spellcheck={false} autoComplete="off" />
        </label>
        <label>
          USDC
          <input name="amount" inputMode="decimal" value={amountText} onInput={(e) => setAmount(e.currentTarget.value)} />
        </label>
        <button type="submit">Deposit</button>
        <button type="button" onClick={move('withdraw')}>
          Withdraw
        </button>
        <button type="button" onClick={() => run(() => adminCall<WalletBalances>(path), 'Balances read')}>
          Balances
        </button>
      </form>
      <form class="filters" aria-label="Closed-only mode" onSubmit={(e) => e.preventDefault()}>
        <label class="check">
          <input type="checkbox" checked={closedOnly} onChange={(e) => setClosedOnly(e.currentTarget.checked)} />
          Closed-only (cancels and sells only)
        </label>
        <button
          type="button"
          onClick={() =>
            run(async () => {
              const r = await adminCall<Static<typeof ClosedOnlyReply>>(`${path}/closed-only`, { method: 'PUT', body: { closedOnly } });
              setClosedOnly(r.closedOnly);
              return undefined;
            }, `Closed-only ${closedOnly ? 'on' : 'off'} for ${short(address.trim())}`)
          }
        >
          Apply to this wallet
        </button>
      </form>
      <Result o={o} />
      {balances && (
        <table aria-label="Balances" data-address={balances.address}>
          <thead>
            <tr>
              <th scope="col">Asset</th>
              <th scope="col" class="num">
                Available
              </th>
              <th scope="col" class="num">
                Reserved
              </th>
            </tr>
          </thead>
          <tbody>
            <tr data-asset="usdc">
              <td>USDC</td>
              <td class="num">{amount(balances.usdc.available)}</td>
              <td class="num">{amount(balances.usdc.reserved)}</td>
            </tr>
            {balances.tokens.map((t) => (
              <tr key={t.asset}>
                <td class="mono">{short(t.asset, 10)}</td>
                <td class="num">{amount(t.available)}</td>
                <td class="num">{amount(t.reserved)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </>
  );
}

async function allMarkets(signal: AbortSignal): Promise<MarketBook[]> {
  const out: MarketBook[] = [];
  let cursor: string | undefined;
  // Every page, up to 20 (10,000 markets): the operator picks any market, not only the first page's.
  for (let i = 0; i < 20 && cursor !== END_CURSOR; i++) {
    const page = await call<MarketsPage>(`/markets${cursor ? `?next_cursor=${encodeURIComponent(cursor)}` : ''}`, { signal });
    out.push(...page.data);
    cursor = page.next_cursor;
  }
  return out;
}

const FLAGS = ['active', 'closed', 'archived', 'acceptingOrders'] as const;
type Flag = (typeof FLAGS)[number];

function Markets() {
  const [version, setVersion] = useState(0);
  const list = useLoad(String(version), allMarkets);
  const [filter, setFilter] = useState('');
  const [chosen, setChosen] = useState('');
  const [flags, setFlags] = useState<Record<Flag, boolean>>({ active: true, closed: false, archived: false, acceptingOrders: true });
  const [winner, setWinner] = useState(0);
  const [confirming, setConfirming] = useState(false);
  const [o, setO] = useState<Outcome>({ error: '' });

  const markets = list.data ?? [];
  const shown = useMemo(() => {
    const words = filter.toLowerCase().split(/\s+/).filter((w) => w !== '');
    return markets.filter((m) => words.every((w) => `${m.question} ${m.market_slug}`.toLowerCase().includes(w)));
  }, [markets, filter]);
  const m = markets.find((x) => x.condition_id === chosen);

  useEffect(() => {
    if (!m) return;
    setFlags({ active: m.active, closed: m.closed, archived: m.archived, acceptingOrders: m.accepting_orders });
    setConfirming(false);
  }, [chosen, m?.active, m?.closed, m?.archived, m?.accepting_orders]);

  const act = async (what: () => Promise<unknown>, note: string) => {
    try {
      await what();
      setO({ error: '', note });
      setVersion((v) => v + 1);
    } catch (e) {
      setO(outcomeOf(e));
    }
  };
  const path = `/admin/markets/${chosen}`;

  return (
    <>
      <ErrorText error={list.error} />
      <form class="filters" onSubmit={(e) => e.preventDefault()} aria-label="Choose a market">
        <label>
          Filter
          <input type="search" value={filter} onInput={(e) => setFilter(e.currentTarget.value)} placeholder="question or slug" />
        </label>
        <label>
          Market
          <select name="market" value={chosen} onChange={(e) => setChosen(e.currentTarget.value)}>
            <option value="">Choose a market ({shown.length})</option>
            {shown.map((x) => (
              <option key={x.condition_id} value={x.condition_id}>
                {x.question} [{statusOf(x)}]
              </option>
            ))}
          </select>
        </label>
      </form>
      {m && (
        <div class="admin-market" data-condition-id={m.condition_id}>
          <p>
            <a href={href('market', m.market_slug)}>{m.question}</a> <span class={`tag status-${statusOf(m)}`}>{statusOf(m)}</span>
          </p>
          <form
            class="filters"
            aria-label="Market status"
            onSubmit={(e) => {
              e.preventDefault();
              void act(() => adminCall(`${path}/status`, { method: 'POST', body: flags }), 'Status changed');
            }}
          >
            {FLAGS.map((f) => (
              <label key={f} class="check">
                <input type="checkbox" name={f} checked={flags[f]} onChange={(e) => setFlags({ ...flags, [f]: e.currentTarget.checked })} />
                {f}
              </label>
            ))}
            <button type="submit">Apply status</button>
          </form>
          <form
            class="filters"
            aria-label="Resolve the market"
            onSubmit={(e) => {
              e.preventDefault();
              if (!confirming) {
                setConfirming(true);
                return;
              }
              setConfirming(false);
              void act(
                () => adminCall(`${path}/resolve`, { method: 'POST', body: { winningOutcomeIndex: winner } }),
                `Resolved: ${m.tokens[winner]?.outcome} won`,
              );
            }}
          >
            <fieldset class="segmented">
              <legend>Winning outcome</legend>
              {m.tokens.map((t, i) => (
                <label key={t.token_id}>
                  <input type="radio" name="winner" value={i} checked={winner === i} onChange={() => setWinner(i)} />
                  {t.outcome}
                </label>
              ))}
            </fieldset>
            <button type="submit" class={confirming ? 'danger' : undefined}>
              {confirming ? `Confirm: resolve with ${m.tokens[winner]?.outcome} winning` : 'Resolve…'}
            </button>
            {confirming && (
              <>
                <button type="button" onClick={() => setConfirming(false)}>
                  Keep it open
                </button>
                <p class="muted small" role="status">
                  Resolving cancels every open order of the market and pays the winning token 1 USDC. It cannot be undone.
                </p>
              </>
            )}
          </form>
        </div>
      )}
      <Result o={o} />
    </>
  );
}

export function OperatorPage() {
  const token = useCell(adminToken);
  return (
    <>
      <div class="page-head">
        <h1 tabIndex={-1}>Operator</h1>
        {token !== '' && (
          <span class="badge status-live" data-testid="admin-token-set">
            Admin token set{' '}
            <button type="button" class="link" onClick={() => adminToken.set('')}>
              Forget it
            </button>
          </span>
        )}
      </div>
      {token === '' ? (
        <Section title="Admin token" id="token">
          <TokenForm />
        </Section>
      ) : (
        <div class="wallet-grid">
          <Section title="Test clock" id="clock">
            <TestClock />
          </Section>
          <Section title="Snapshots" id="snapshots">
            <Snapshots />
          </Section>
          <Section title="Markets" id="admin-markets">
            <Markets />
          </Section>
          <Section title="Sandbox" id="sandbox">
            <Sandbox />
          </Section>
          <Section title="Wallet funds" id="funds">
            <Funds />
          </Section>
        </div>
      )}
    </>
  );
}
