/**
 * Room edge/schemas/: the wire types (TypeBox), one module per resource; the source of the handlers' and the
 * read side's types (queries/ and projections/ import them as types). Below everything that serves: of edge/
 * it imports only refusals/reason.ts.
 *
 * Schema fragments every wire module uses: the plain string, number and boolean, and field lists of one
 * of them written as a table of names (`...strings('id', 'slug')` is `{ id: Str, slug: Str }`, in that
 * order, so documents keep their key order).
 */
import { Type, type TBoolean, type TNumber, type TString } from '@sinclair/typebox';

export const Str = Type.String();
export const Num = Type.Number();
export const Bool = Type.Boolean();
/** An order's side. */
export const Side = Type.Union([Type.Literal('BUY'), Type.Literal('SELL')]);
/** Which side of a trade a party's order took. */
export const TraderSide = Type.Union([Type.Literal('TAKER'), Type.Literal('MAKER')]);

function fields<S, K extends string>(schema: S, keys: readonly K[]): { [P in K]: S } {
  const out = {} as { [P in K]: S };
  for (const k of keys) out[k] = schema;
  return out;
}

/** Fields that are plain strings, in the order given. */
export const strings = <K extends string>(...keys: K[]): { [P in K]: TString } => fields(Str, keys);
/** Fields that are plain numbers, in the order given. */
export const numbers = <K extends string>(...keys: K[]): { [P in K]: TNumber } => fields(Num, keys);
/** Fields that are plain booleans, in the order given. */
export const booleans = <K extends string>(...keys: K[]): { [P in K]: TBoolean } => fields(Bool, keys);
