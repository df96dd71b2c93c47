/**
 * Choosing the wallet the console signs with: one of the demo wallets (TEST keys derived from public
 * strings, README "Demo wallets") or a pasted private key. A pasted key goes from the password field into
 * the signer and the field is emptied: it is kept in this page's memory only and never shown again.
 */
import { useState } from 'preact/hooks';
import { messageOf } from '../api.ts';
import { short } from '../format.ts';
import { connectWallet, disconnectWallet, useCell, wallet } from '../session.ts';
import { DEMO_WALLETS, demoKey } from '../signing.ts';
import { ErrorText } from './common.tsx';

const PASTE = 'paste';

export function WalletConnect({ compact = false }: { compact?: boolean }) {
  const w = useCell(wallet);
  const [choice, setChoice] = useState(DEMO_WALLETS[0].seed);
  const [key, setKey] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState('');

  if (w) {
    return (
      <div class="wallet-connected" data-address={w.address}>
        <span>
          Signing as <a href={`#/wallet/${w.address}`}>{short(w.address)}</a> <span class="muted">({w.label})</span>
        </span>
        {!compact && (
          <button type="button" class="link" onClick={disconnectWallet}>
            Disconnect
          </button>
        )}
      </div>
    );
  }

  const connect = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError('');
    const demo = DEMO_WALLETS.find((d) => d.seed === choice);
    const privateKey = demo ? demoKey(demo.seed) : key;
    // The field is emptied before the answer comes back: the key lives on in the signer only.
    setKey('');
    try {
      await connectWallet(privateKey, demo ? demo.label : 'Pasted key');
    } catch (err) {
      setError(messageOf(err));
    } finally {
      setBusy(false);
    }
  };

  return (
    <form class="wallet-connect" onSubmit={connect} aria-label="Connect a wallet">
      <label>
        Wallet
        <select value={choice} onChange={(e) => setChoice(e.currentTarget.value)} name="wallet">
          {DEMO_WALLETS.map((d) => (
            <option key={d.seed} value={d.seed}>
              {d.label} (test key)
            </option>
          ))}
          <option value={PASTE}>Paste a private key…</option>
        </select>
      </label>
      {choice === PASTE && (
        <label>
          Private key (kept in this page only)
          <input type="password" name="private-key" autoComplete="off" spellcheck={false} value={key} onInput={(e) => setKey(e.currentTarget.value)} required />
        </label>
      )}
      <button type="submit" disabled={busy}>
        {busy ? 'Connecting…' : 'Connect'}
      </button>
      <ErrorText error={error} />
    </form>
  );
}
