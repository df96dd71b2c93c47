/**
 * The vocabulary of the price history (GET /prices-history, POST /batch-prices-history), shared by the
 * request schemas that check it and the reader that answers it (queries/market-data.ts): the windows a
 * client may name, and the bucket width (`fidelity`) in whole minutes, one minute to one year.
 */

/** Windows ending now: '1m' is one month (30 days), as on the platform's charts; 'max' and 'all' are everything. */
export const HISTORY_INTERVALS = ['1m', '1h', '6h', '1d', '1w', 'max', 'all'] as const;
export type HistoryInterval = (typeof HISTORY_INTERVALS)[number];

/** Fidelity bounds in minutes. */
export const MIN_FIDELITY = 1;
export const MAX_FIDELITY = 525_600;
