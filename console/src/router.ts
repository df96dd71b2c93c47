/**
 * Pages are addressed by the URL's fragment (`/console#/market/<slug>`): the service serves one page for
 * /console, so every view is a link that can be bookmarked, reloaded and opened in another tab without
 * the service knowing the console's routes.
 */
import { useEffect, useState } from 'preact/hooks';

/** The fragment's path segments, decoded: `#/market/abc` -> ['market', 'abc']. */
export function currentRoute(): string[] {
  return location.hash
    .replace(/^#\/?/, '')
    .split('/')
    .filter((s) => s !== '')
    .map((s) => {
      try {
        return decodeURIComponent(s);
      } catch {
        return s;
      }
    });
}

export function useRoute(): string[] {
  const [route, setRoute] = useState(currentRoute);
  useEffect(() => {
    const on = () => setRoute(currentRoute());
    window.addEventListener('hashchange', on);
    return () => window.removeEventListener('hashchange', on);
  }, []);
  return route;
}

export function href(...parts: string[]): string {
  return `#/${parts.map(encodeURIComponent).join('/')}`;
}
