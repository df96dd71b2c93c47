/** Pieces every page uses: loading a resource, showing the API's error, a channel's state. */
import type { ComponentChildren } from 'preact';
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { ADMIN_OWNER } from '../../../src/domain/events.ts';
import { messageOf } from '../api.ts';
import type { ChannelStatus } from '../stream.ts';

export { ADMIN_OWNER };

/** The mark of an order the admin API placed for a wallet (its owner is ADMIN_OWNER: no API key made it). */
export function AdminMade() {
  return (
    <span class="tag admin-made" title="Placed by the admin API (owner: admin), not by a key of this wallet">
      admin-made
    </span>
  );
}

/** What the status hooks read of a channel, whatever its events. */
export interface StatusSource {
  readonly status: ChannelStatus;
  readonly problem: string;
  onStatus(l: (s: ChannelStatus) => void): () => void;
}

export interface Loaded<T> {
  data: T | undefined;
  error: string;
  loading: boolean;
  reload: () => void;
}

/**
 * Runs `load` when `key` changes (and on reload()), keeping the last data while a reload runs. An answer
 * that arrives after a newer load started is dropped, so a slow page never overwrites a fresh one.
 */
export function useLoad<T>(key: string, load: (signal: AbortSignal) => Promise<T>): Loaded<T> {
  const [state, setState] = useState<{ data: T | undefined; error: string; loading: boolean }>({ data: undefined, error: '', loading: true });
  const [tick, setTick] = useState(0);
  const loader = useRef(load);
  loader.current = load;
  useEffect(() => {
    const ctl = new AbortController();
    setState((s) => ({ ...s, loading: true }));
    loader.current(ctl.signal).then(
      (data) => !ctl.signal.aborted && setState({ data, error: '', loading: false }),
      (e: unknown) => !ctl.signal.aborted && setState((s) => ({ data: s.data, error: messageOf(e), loading: false })),
    );
    return () => ctl.abort();
  }, [key, tick]);
  const reload = useCallback(() => setTick((t) => t + 1), []);
  return { ...state, reload };
}

/** Calls `f` at most once per `ms`, with the last arguments (a burst of stream events, one reload). */
export function useThrottled(f: () => void, ms: number): () => void {
  const timer = useRef<number | undefined>(undefined);
  const fn = useRef(f);
  fn.current = f;
  useEffect(() => () => window.clearTimeout(timer.current), []);
  return useCallback(() => {
    if (timer.current !== undefined) return;
    timer.current = window.setTimeout(() => {
      timer.current = undefined;
      fn.current();
    }, ms);
  }, [ms]);
}

/** An error as the API worded it; nothing when there is none. */
export function ErrorText({ error, errors }: { error: string; errors?: { path: string; message: string }[] }) {
  if (error === '') return null;
  return (
    <div class="error" role="alert">
      <p>{error}</p>
      {errors && errors.length > 0 && (
        <ul>
          {errors.map((e) => (
            <li key={e.path + e.message}>
              <code>{e.path}</code> {e.message}
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}

const STATUS_TEXT: Record<ChannelStatus, string> = {
  connecting: 'Connecting…',
  live: 'Live',
  reconnecting: 'Reconnecting…',
  refused: 'Refused',
  closed: 'Closed',
};

export function useChannelStatus(ch: StatusSource | undefined): ChannelStatus {
  const [s, setS] = useState<ChannelStatus>(ch?.status ?? 'closed');
  useEffect(() => {
    if (!ch) return;
    setS(ch.status);
    return ch.onStatus(setS);
  }, [ch]);
  return s;
}

/** "Live" / "Reconnecting…" for a channel, with the service's reason when it refused the socket. */
export function ChannelBadge({ channel, label }: { channel: StatusSource | undefined; label: string }) {
  const s = useChannelStatus(channel);
  return (
    <span class={`badge status-${s}`} role="status" data-channel={label} data-status={s}>
      <span class="dot" aria-hidden="true" />
      {label}: {STATUS_TEXT[s]}
      {s === 'refused' && channel ? ` (${channel.problem})` : ''}
    </span>
  );
}

export function Section({ title, children, id, actions }: { title: string; children: ComponentChildren; id?: string; actions?: ComponentChildren }) {
  return (
    <section class="panel" id={id} aria-labelledby={id ? `${id}-title` : undefined}>
      <header class="panel-head">
        <h2 id={id ? `${id}-title` : undefined}>{title}</h2>
        {actions}
      </header>
      {children}
    </section>
  );
}
