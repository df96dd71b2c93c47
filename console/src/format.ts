/** How numbers, times and ids read on the console's pages. */

/** A price as the API gives it ("0.45"), with at least 2 and at most 4 decimals; "" stays "–". */
export function price(p: string | number | undefined): string {
  if (p === undefined || p === '') return '–';
  const n = typeof p === 'number' ? p : Number(p);
  if (!Number.isFinite(n)) return String(p);
  const [whole, frac = ''] = n.toFixed(4).replace(/0+$/, '').split('.');
  return `${whole}.${frac.padEnd(2, '0')}`;
}

/** A size or an amount, at most 2 decimals, with thousands separators. */
export function amount(v: string | number | undefined): string {
  if (v === undefined || v === '') return '–';
  const n = typeof v === 'number' ? v : Number(v);
  return Number.isFinite(n) ? n.toLocaleString('en-US', { maximumFractionDigits: 2 }) : String(v);
}

export function usd(v: number | undefined): string {
  if (v === undefined || !Number.isFinite(v)) return '–';
  return `${v < 0 ? '-' : ''}$${Math.abs(v).toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 })}`;
}

export function percent(v: number | undefined): string {
  return v === undefined || !Number.isFinite(v) ? '–' : `${v.toFixed(1)}%`;
}

/** Unix seconds or ms (by size) as a local time; today's as HH:MM:SS. */
export function time(t: number | string): string {
  let n = Number(t);
  if (!Number.isFinite(n) || n <= 0) return '–';
  if (n < 1e12) n *= 1000;
  const d = new Date(n);
  const today = new Date().toDateString() === d.toDateString();
  return today ? d.toLocaleTimeString('en-GB') : `${d.toLocaleDateString('en-CA')} ${d.toLocaleTimeString('en-GB', { hour: '2-digit', minute: '2-digit' })}`;
}

/** 0x1234…abcd */
export function short(id: string, keep = 6): string {
  return id.length <= keep * 2 + 1 ? id : `${id.slice(0, keep)}…${id.slice(-4)}`;
}

export function bps(v: number): string {
  return v === 0 ? '0' : `${v} bps (${(v / 100).toFixed(2)}%)`;
}
