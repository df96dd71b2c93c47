/**
 * The offset cursor of the order-book lists: base64 of a decimal offset. `MA==` ("0") asks for the
 * first page; `LTE=` ("-1") marks the last page and is never omitted, because the platform's client
 * loops until it sees it (reference/official-client.md section 2). A request with `LTE=` gets an empty
 * page; anything else that is not base64 of a non-negative integer is malformed.
 */

export const FIRST_CURSOR = 'MA==';
export const END_CURSOR = 'LTE=';

/** Offset to cursor. */
export function encodeCursor(offset: number): string {
  return Buffer.from(String(offset), 'utf8').toString('base64');
}

/**
 * Cursor to offset: a non-negative integer, 'end' for LTE=, or undefined when malformed.
 * An absent or empty cursor is the first page.
 */
export function decodeCursor(cursor: string | undefined): number | 'end' | undefined {
  if (cursor === undefined || cursor === '') return 0;
  if (cursor === END_CURSOR) return 'end';
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(cursor) || cursor.length % 4 !== 0) return undefined;
  const text = Buffer.from(cursor, 'base64').toString('utf8');
  if (!/^(0|[1-9]\d{0,15})$/.test(text)) return undefined;
  const n = Number(text);
  return Number.isSafeInteger(n) ? n : undefined;
}

/** The cursor that follows a page of `count` rows read at `offset` out of `total`. */
export function nextCursor(offset: number, count: number, total: number): string {
  return offset + count >= total ? END_CURSOR : encodeCursor(offset + count);
}
