/**
 * The only place that chooses an error's HTTP status and body. Errors are specs from the catalogue
 * (domain/errors.ts); the body form depends on the route group (DESIGN section 4):
 *   catalog errors that carry a `type`  -> {"type": "...", "error": "..."}
 *   everything else                     -> {"error": "..."} (+ extra fields such as admin `errors`)
 */
import { apiError, isApiError, Errors, type ApiError } from '../../domain/errors.ts';
import type { Refusal } from '../refusals/reason.ts';
import { reply, type Reply, type RouteGroup } from './route.ts';
import type { FieldProblem } from './validate.ts';

export function errorReply(e: ApiError, headers?: Record<string, string>): Reply {
  const body: Record<string, unknown> = e.spec.type ? { type: e.spec.type, error: e.message } : { error: e.message };
  if (e.extra) Object.assign(body, e.extra);
  return reply({ status: e.spec.status, body, headers, refusal: e.reason as Refusal | undefined });
}

/** A validation failure as the error of its route group. */
export function problemError(group: RouteGroup, p: FieldProblem, fieldMessages?: Record<string, string>): ApiError {
  switch (group) {
    case 'data':
      if (p.kind === 'unknown') return apiError('PM_ERR_DATA_UNKNOWN_FIELD', { name: p.field });
      if (p.kind === 'missing') return apiError('PM_ERR_DATA_MISSING_FIELD', { name: p.field });
      return apiError('PM_ERR_DATA_INVALID_FIELD', { name: p.field });
    case 'catalog':
      return p.kind === 'missing'
        ? apiError('PM_ERR_CATALOG_REQUIRED', { param: p.field })
        : apiError('PM_ERR_CATALOG_PARAM', { param: p.field });
    case 'admin':
      return apiError('PM_ERR_ADMIN_INVALID', undefined, { errors: p.all ?? [{ path: p.field, message: p.kind }] });
    default: {
      if (p.kind === 'too-many') return apiError('PM_ERR_BAD_REQUEST', { detail: `too many items: ${p.count}, max allowed: ${p.max}` });
      const custom = fieldMessages?.[p.field];
      if (custom) return apiError('PM_ERR_BAD_REQUEST', { detail: custom });
      return apiError('PM_ERR_BAD_REQUEST', { detail: `${p.kind === 'missing' ? 'missing' : 'invalid'} ${p.field}` });
    }
  }
}

/** Anything thrown by a handler: catalogue errors pass through, the rest is an internal error. */
export function toApiError(e: unknown): { error: ApiError; unexpected: boolean } {
  if (isApiError(e)) return { error: e, unexpected: false };
  return { error: apiError('PM_ERR_INTERNAL'), unexpected: true };
}

export { Errors };
