/**
 * A request a gateway forwards to the sequencer and the sequencer's answer (ROLE=gateway; docs/decisions/scale-out.md,
 * "Gateways"): the one shape the edge's two ends (edge/cluster/forward.ts) and the transport that carries it
 * (replication/commands.ts, which owns its wire format) agree on.
 */

/** One HTTP request as the gateway received it. */
export interface ForwardedRequest {
  method: string;
  path: string;
  query: string;
  headers: Record<string, string>;
  body: Buffer | undefined;
  /** The client's address as the gateway determined it (its own trusted-proxy rules). */
  ip: string;
  /** Date.now() when it arrived at the gateway. */
  receivedAt: number;
  /** What the gateway verified of it (edge/auth/order-check.ts OrderHint per submission); opaque to the transport. */
  hints?: unknown;
}

/** The sequencer's answer to one request, unchanged, and a refusal's reason as class and text. */
export interface ForwardedAnswer {
  status: number;
  headers?: Record<string, string>;
  body: string;
  noBody?: boolean;
  refusal?: { class: string; text: string };
}
