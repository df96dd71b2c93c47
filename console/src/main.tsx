/**
 * The web console's entry: the page frame (navigation, the signing wallet) and the page the URL fragment
 * names. Each page moves keyboard focus to its heading, so a keyboard or screen-reader user starts
 * reading the new page where it begins.
 */
import { render } from 'preact';
import { useEffect, useRef } from 'preact/hooks';
import './styles.css';
import { MarketPage } from './pages/market.tsx';
import { MarketsPage } from './pages/markets.tsx';
import { OperatorPage } from './pages/operator.tsx';
import { WalletPage } from './pages/wallet.tsx';
import { href, useRoute } from './router.ts';
import { useCell, wallet } from './session.ts';
import { short } from './format.ts';

function Page({ route }: { route: string[] }) {
  const [name, arg] = route;
  switch (name) {
    case 'market':
      return arg ? <MarketPage key={arg} slug={arg} /> : <MarketsPage />;
    case 'wallet':
      return <WalletPage key={arg ?? ''} address={arg} />;
    case 'operator':
      return <OperatorPage />;
    default:
      return <MarketsPage />;
  }
}

function App() {
  const route = useRoute();
  const w = useCell(wallet);
  const main = useRef<HTMLElement>(null);
  const first = useRef(true);
  const section = route[0] ?? 'markets';

  useEffect(() => {
    if (first.current) {
      first.current = false;
      return;
    }
    window.scrollTo(0, 0);
    main.current?.querySelector<HTMLElement>('h1')?.focus();
  }, [route.join('/')]);

  const link = (to: string, label: string, path: string) => (
    <a href={path} aria-current={section === to || (to === 'markets' && section === 'market') ? 'page' : undefined}>
      {label}
    </a>
  );
  return (
    <>
      <a class="skip" href="#main" onClick={(e) => (e.preventDefault(), main.current?.querySelector<HTMLElement>('h1')?.focus())}>
        Skip to content
      </a>
      <header class="top">
        <a class="brand" href={href()}>
          pm-exchange
        </a>
        <nav aria-label="Console">
          {link('markets', 'Markets', href())}
          {link('wallet', 'Wallet', w ? href('wallet', w.address) : href('wallet'))}
          {link('operator', 'Operator', href('operator'))}
        </nav>
        <span class="who" data-testid="signing-wallet">
          {w ? `${w.label} · ${short(w.address)}` : 'No wallet'}
        </span>
      </header>
      <main id="main" ref={main}>
        <Page route={route} />
      </main>
      <footer class="foot muted small">
        A client of this service's public API (<a href="/openapi.json">OpenAPI</a>). Demo wallets use TEST keys anyone can derive. Charts: TradingView Lightweight
        Charts™, Copyright © 2025 TradingView, Inc., <a href="https://www.tradingview.com/">tradingview.com</a>.
      </footer>
    </>
  );
}

render(<App />, document.getElementById('app')!);
