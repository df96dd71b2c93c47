/**
 * Compiles every route's schemas once, at registration, into three parsers: path parameters, query
 * string and JSON body. The hot path runs a compiled `Check`; the error list is built only on failure.
 *
 * Query strings carry only text, so each query property is converted by its schema kind before the
 * check, strictly: integers are /-?\d+/, numbers plain decimals, booleans exactly `true`/`false`, arrays
 * comma-separated (a repeated key also appends). A value that does not convert is kept as text so the
 * check fails and names the field. Unknown query parameters are errors only on wallet data routes; other
 * routes drop them (clients send extras, DESIGN section 7).
 *
 * Failures come back as a `FieldProblem` (unknown / missing / invalid / too-many + the field's name);
 * error-reply.ts turns it into the group's error body. Only the first few errors are ever looked at (the
 * admin API lists up to MAX_LISTED): enumerating every error of a megabyte of wrong array elements cost
 * 300 ms of the main thread per request. A body array longer than its schema's maxItems is refused on its
 * length alone, before any element is checked.
 */
import { Kind, type TSchema, type TObject } from '@sinclair/typebox';
import { TypeCompiler, type TypeCheck } from '@sinclair/typebox/compiler';
import { ValueErrorType, type ValueError } from '@sinclair/typebox/errors';
import type { AnyRoute } from './route.ts';

export type ProblemKind = 'unknown' | 'missing' | 'invalid' | 'too-many';
export interface FieldProblem {
  kind: ProblemKind;
  field: string;
  /** The problems found, at most MAX_LISTED (admin routes list them). */
  all?: { path: string; message: string }[];
  /** too-many: the array's length and its bound. */
  count?: number;
  max?: number;
}

/** The most problems an admin answer lists. */
export const MAX_LISTED = 50;
/** How far past the first error to look for a missing property (reported after its type error). */
const LOOK_FOR_REQUIRED = 8;

export type Parsed<T> = { ok: true; value: T } | { ok: false; problem: FieldProblem };

type Convert = (raw: string[]) => unknown;

const INT = /^-?\d{1,16}$/;
const NUM = /^-?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/;

function converterFor(schema: TSchema): Convert {
  switch (schema[Kind]) {
    case 'Integer':
      // Beyond 2^53 Number() silently rounds (9007199254740993 -> ...992): refuse rather than change the value.
      return (raw) => (raw.length === 1 && INT.test(raw[0]) && Number.isSafeInteger(Number(raw[0])) ? Number(raw[0]) : raw.join(','));
    case 'Number':
      return (raw) => (raw.length === 1 && NUM.test(raw[0]) ? Number(raw[0]) : raw.join(','));
    case 'Boolean':
      return (raw) => (raw.length === 1 && (raw[0] === 'true' || raw[0] === 'false') ? raw[0] === 'true' : raw.join(','));
    case 'Array': {
      const item = converterFor(schema.items as TSchema);
      return (raw) => raw.flatMap((r) => r.split(',')).map((s) => s.trim()).filter((s) => s !== '').map((s) => item([s]));
    }
    default:
      // Strings, literals and unions of literals: one value; a repeated key is ambiguous.
      return (raw) => (raw.length === 1 ? raw[0] : raw);
  }
}

function fieldFromPath(path: string): string {
  // '/order/makerAmount' -> 'order.makerAmount'; '/0/token_id' -> '[0].token_id'
  return path
    .split('/')
    .filter(Boolean)
    .map((seg, i) => (/^\d+$/.test(seg) ? `[${seg}]` : i === 0 ? seg : `.${seg}`))
    .join('')
    .replace(/^\./, '');
}

function problemOf(check: TypeCheck<TSchema>, value: unknown, collectAll: boolean): FieldProblem {
  const errors: ValueError[] = [];
  const limit = collectAll ? MAX_LISTED : LOOK_FOR_REQUIRED;
  for (const e of check.Errors(value)) {
    errors.push(e);
    if (errors.length >= limit) break;
  }
  const first = errors[0];
  let kind: ProblemKind = 'invalid';
  let field = first ? fieldFromPath(first.path) : '';
  if (first?.type === ValueErrorType.ObjectRequiredProperty) kind = 'missing';
  // A missing property is reported both as "required" and as a type error of the absent value; prefer "required".
  const required = errors.find((e) => e.type === ValueErrorType.ObjectRequiredProperty);
  if (required) {
    kind = 'missing';
    field = fieldFromPath(required.path);
  }
  const problem: FieldProblem = { kind, field: field || 'body' };
  if (collectAll) problem.all = errors.map((e) => ({ path: fieldFromPath(e.path) || '(body)', message: e.message }));
  return problem;
}

export interface CompiledRoute {
  parseParams(values: string[]): Parsed<unknown>;
  parseQuery(raw: string): Parsed<unknown>;
  /** `json` is the already-parsed body (undefined when absent). */
  checkBody(json: unknown): Parsed<unknown>;
  readonly paramNames: string[];
  readonly hasBody: boolean;
}

export function paramNamesOf(pattern: string): string[] {
  return pattern.split('/').filter((s) => s.startsWith(':')).map((s) => s.slice(1));
}

/**
 * Compiled checks by schema: a sandbox revert builds the route table again (node/revert.ts), from the same
 * schema objects, and compiling them all again cost it about 30 ms. A compiled check holds no state.
 */
const checks = new WeakMap<TSchema, TypeCheck<TSchema>>();

function compiled(schema: TSchema): TypeCheck<TSchema> {
  let c = checks.get(schema);
  if (c === undefined) {
    c = TypeCompiler.Compile(schema);
    checks.set(schema, c);
  }
  return c;
}

export function compileRoute(r: AnyRoute): CompiledRoute {
  const paramNames = paramNamesOf(r.path);
  const strictQuery = r.group === 'data';
  const collectAll = r.group === 'admin';

  const paramsCheck = r.params ? compiled(r.params) : undefined;
  const queryCheck = r.query ? compiled(r.query) : undefined;
  const bodyCheck = r.body ? compiled(r.body) : undefined;
  const maxItems = r.body?.[Kind] === 'Array' && typeof r.body.maxItems === 'number' ? (r.body.maxItems as number) : undefined;
  const queryProps: Record<string, TSchema> = (r.query as TObject | undefined)?.properties ?? {};
  const converters = new Map(Object.entries(queryProps).map(([k, s]) => [k, converterFor(s)]));

  // Routes without path parameters or without a query schema (outside the strict data group) need no
  // parsing at all: answer with one shared, frozen result instead of building objects per request.
  const EMPTY: Parsed<unknown> = Object.freeze({ ok: true, value: Object.freeze({}) }) as Parsed<unknown>;
  const skipQuery = !queryCheck && !strictQuery;

  return {
    paramNames,
    hasBody: r.body !== undefined,
    parseParams(values) {
      if (paramNames.length === 0 && !paramsCheck) return EMPTY;
      const obj: Record<string, string> = {};
      paramNames.forEach((n, i) => (obj[n] = values[i] ?? ''));
      if (!paramsCheck || paramsCheck.Check(obj)) return { ok: true, value: obj };
      return { ok: false, problem: problemOf(paramsCheck, obj, collectAll) };
    },
    parseQuery(raw) {
      if (skipQuery || (raw === '' && !queryCheck)) return EMPTY;
      const grouped = new Map<string, string[]>();
      if (raw) {
        for (const [k, v] of new URLSearchParams(raw)) {
          const list = grouped.get(k);
          if (list) list.push(v);
          else grouped.set(k, [v]);
        }
      }
      const obj: Record<string, unknown> = {};
      for (const [k, vals] of grouped) {
        const conv = converters.get(k);
        if (conv) obj[k] = conv(vals);
        else if (strictQuery) return { ok: false, problem: { kind: 'unknown', field: k } };
      }
      if (!queryCheck || queryCheck.Check(obj)) return { ok: true, value: obj };
      const problem = problemOf(queryCheck, obj, collectAll);
      // A bad list item is a bad value of the parameter the client sent: `market`, not `market[1]`.
      problem.field = problem.field.replace(/\[\d+\].*$/, '');
      return { ok: false, problem };
    },
    checkBody(json) {
      if (maxItems !== undefined && Array.isArray(json) && json.length > maxItems) {
        return { ok: false, problem: { kind: 'too-many', field: 'body', count: json.length, max: maxItems } };
      }
      if (!bodyCheck || bodyCheck.Check(json)) return { ok: true, value: json };
      return { ok: false, problem: problemOf(bodyCheck, json, collectAll) };
    },
  };
}
