/**
 * The catalog's write side: validates admin upserts against the store, turns them into records, and
 * writes records and every index entry they imply in one LMDB transaction per request. All or nothing:
 * the plan is computed and checked inside the transaction (so no concurrent write can slip between the
 * check and the write) and nothing is written unless the whole request is valid; a fault while writing
 * aborts the child transaction, so a half-applied request cannot be committed either.
 *
 * Upsert semantics (docs/decisions/catalog.md, "Catalog"):
 *   - identity: `id` when given; else an event by slug, a market by condition id then slug, a tag or
 *     series by slug; else a new id from a per-kind sequence;
 *   - an input is the full desired state of the fields it covers: a missing optional field takes its
 *     documented default, not the stored value (server-managed fields such as createdAt and the
 *     resolution are kept);
 *   - markets are added to their event, never removed (trading state hangs off them); tags and series
 *     given with only `id`/`slug` are references and change nothing;
 *   - a record whose content did not change is not rewritten and keeps its updatedAt, so re-importing a
 *     file is a no-op that reports everything unchanged.
 *
 * Index entries are diffed (old record's keys vs new record's keys), so an update writes only what moved.
 *
 * The parts, in projections/catalog/: input.ts (field normalization), derive.ts (derived ids), lookups.ts
 * (reads by id and unique index), planner.ts (records and problems of a request), id-allocator.ts (which id
 * an input gets), unique-values.ts (values unique across a request and the store), index-keys.ts (the index
 * entries of each record), apply.ts (writing a plan), writer.ts (CatalogWriter). This module is their
 * public face, so callers do not depend on the layout.
 */
export { CATALOG_ORACLE, TokenMemo, deriveConditionId, deriveNegRiskMarketId, deriveTokenId, toTradingMarket } from './catalog/derive.ts';
export { normalizeIso, type Problem } from './catalog/input.ts';
export { firstIndexedId } from './catalog/lookups.ts';
export { explicitIdFloors, planUpsert, summarize, type IdFloors, type KindCounts, type UpsertSummary } from './catalog/planner.ts';
export { CatalogWriter, type MarketsListener, type StatusOutcome, type UpsertOutcome } from './catalog/writer.ts';
