/**
 * Schemas of the sandbox's test controls (edge/sandbox/test-controls.ts, routes/test-controls.ts): the test
 * clock's state and moves. Bodies are strict (an unknown field is an error): a misspelt `seconds` must not
 * advance nothing silently.
 */
import { Type, type Static } from '@sinclair/typebox';

export const ClockState = Type.Object({
  now: Type.String({ description: 'the exchange\'s time, ISO 8601 (what every time rule follows)' }),
  nowMs: Type.Integer({ description: 'the same, ms since the epoch' }),
  time: Type.Integer({ description: 'the same, unix seconds: what GET /time answers' }),
  frozen: Type.Boolean({ description: 'frozen: time moves only when advanced; running: at the machine clock\'s pace' }),
  offsetMs: Type.Integer({ description: 'running: how far the exchange\'s time is ahead of the machine\'s (negative: behind); 0 while frozen' }),
});
export type ClockState = Static<typeof ClockState>;

export const ClockModeBody = Type.Object(
  { frozen: Type.Boolean({ description: 'true: freeze the time where it stands; false: let it run on from there' }) },
  { additionalProperties: false },
);

const YEAR_SECONDS = 366 * 86_400;

export const AdvanceBody = Type.Object(
  {
    seconds: Type.Optional(Type.Number({ minimum: 0, maximum: YEAR_SECONDS, description: 'move the time this far ahead (fractions are milliseconds)' })),
    to: Type.Optional(
      Type.Union([Type.Integer({ minimum: 0, description: 'unix seconds' }), Type.String({ minLength: 1, maxLength: 64, description: 'ISO 8601' })], {
        description: 'move the time to this instant (not before the exchange\'s time); exactly one of seconds and to',
      }),
    ),
  },
  { additionalProperties: false },
);
export type AdvanceBody = Static<typeof AdvanceBody>;

export const AdvanceReply = Type.Object({
  clock: ClockState,
  advanced: Type.Object({
    from: Type.String({ description: 'ISO 8601' }),
    to: Type.String({ description: 'ISO 8601' }),
    timers: Type.Integer({ description: 'timers that fired on the way (trade moves, heartbeats, samples, scenario events)' }),
    tookMs: Type.Integer({ description: 'real milliseconds the advance took' }),
  }),
});
