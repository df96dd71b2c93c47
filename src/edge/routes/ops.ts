/**
 * Operations: health (GET /, and GET /ok where the platform's V2 client's getOk asks), server time, the
 * OpenAPI document and Prometheus metrics.
 */
import { Type } from '@sinclair/typebox';
import { apiError } from '../../domain/errors.ts';
import { nowSeconds } from '../../runtime/clock.ts';
import type { AppContext } from '../context.ts';
import { bindRoutes, reply, routeSpec, type AnyRoute, type RouteSpec } from '../pipeline/route.ts';

/** What the ops routes use of the app context. */
export type OpsContext = Pick<AppContext, 'state' | 'clock' | 'metrics' | 'openapi'>;

/** The handlers' dependencies: the context's parts, and the document as text. */
export interface OpsDeps extends Pick<AppContext, 'state' | 'clock' | 'metrics'> {
  openapiText(): string;
}

export function opsDeps(ctx: OpsContext): OpsDeps {
  // The document never changes while the process runs: serialized once (146 KB of JSON per request was
  // one of the ways one client could keep the main thread busy).
  let text: string | undefined;
  return { state: ctx.state, clock: ctx.clock, metrics: ctx.metrics, openapiText: () => (text ??= JSON.stringify(ctx.openapi())) };
}

export function health(d: Pick<OpsDeps, 'state'>): string {
  if (!d.state.ready) throw apiError('PM_ERR_UNAVAILABLE');
  return 'OK';
}

export function serverTime(d: Pick<OpsDeps, 'clock'>): number {
  return nowSeconds(d.clock);
}

export function openapiDocument(d: Pick<OpsDeps, 'openapiText'>) {
  return reply({ raw: d.openapiText() });
}

export async function metricsText(d: Pick<OpsDeps, 'metrics'>) {
  return reply({ raw: await d.metrics.text(), headers: { 'content-type': d.metrics.contentType } });
}

export const OPS_ROUTES: readonly RouteSpec<OpsDeps>[] = [
  routeSpec({
    method: 'GET',
    path: '/',
    group: 'ops',
    summary: 'Health check: "OK" once the service is ready to trade',
    response: Type.Literal('OK'),
    handler: health,
  }),
  routeSpec({
    method: 'GET',
    path: '/ok',
    group: 'ops',
    summary: 'Health check, as GET / (the path the platform\'s V2 client calls in getOk)',
    response: Type.Literal('OK'),
    handler: health,
  }),
  routeSpec({
    method: 'GET',
    path: '/time',
    group: 'ops',
    summary: 'Server time in unix seconds, as a bare JSON number',
    response: Type.Integer(),
    handler: serverTime,
  }),
  routeSpec({
    method: 'GET',
    path: '/openapi.json',
    group: 'ops',
    summary: 'This OpenAPI 3.1 document, generated from the route table',
    response: Type.Object({ openapi: Type.String() }),
    handler: openapiDocument,
  }),
  routeSpec({
    method: 'GET',
    path: '/metrics',
    group: 'ops',
    summary: 'Prometheus metrics (text exposition format)',
    response: Type.String(),
    handler: metricsText,
  }),
];

export function opsRoutes(ctx: OpsContext): AnyRoute[] {
  return bindRoutes(opsDeps(ctx), OPS_ROUTES);
}
