/**
 * Operations: health (GET /, and GET /ok where the platform's V2 client's getOk asks), server time, the
 * OpenAPI document and Prometheus metrics.
 */
import { Type } from '@sinclair/typebox';
import { apiError } from '../../domain/errors.ts';
import { nowSeconds } from '../../runtime/clock.ts';
import type { AppContext } from '../context.ts';
import { reply, route, type AnyRoute } from '../route.ts';

export function opsRoutes(ctx: AppContext): AnyRoute[] {
  // The document never changes while the process runs: serialized once (146 KB of JSON per request was
  // one of the ways one client could keep the main thread busy).
  let openapiText: string | undefined;
  const health = () => {
    if (!ctx.state.ready) throw apiError('PM_ERR_UNAVAILABLE');
    return 'OK';
  };
  return [
    route({
      method: 'GET',
      path: '/',
      group: 'ops',
      summary: 'Health check: "OK" once the service is ready to trade',
      response: Type.Literal('OK'),
      handler: health,
    }),
    route({
      method: 'GET',
      path: '/ok',
      group: 'ops',
      summary: 'Health check, as GET / (the path the platform\'s V2 client calls in getOk)',
      response: Type.Literal('OK'),
      handler: health,
    }),
    route({
      method: 'GET',
      path: '/time',
      group: 'ops',
      summary: 'Server time in unix seconds, as a bare JSON number',
      response: Type.Integer(),
      handler: () => nowSeconds(ctx.clock),
    }),
    route({
      method: 'GET',
      path: '/openapi.json',
      group: 'ops',
      summary: 'This OpenAPI 3.1 document, generated from the route table',
      response: Type.Object({ openapi: Type.String() }),
      handler: () => reply({ raw: (openapiText ??= JSON.stringify(ctx.openapi())) }),
    }),
    route({
      method: 'GET',
      path: '/metrics',
      group: 'ops',
      summary: 'Prometheus metrics (text exposition format)',
      response: Type.String(),
      handler: async () => reply({ raw: await ctx.metrics.text(), headers: { 'content-type': ctx.metrics.contentType } }),
    }),
  ];
}
