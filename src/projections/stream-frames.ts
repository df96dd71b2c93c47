/**
 * Where the streams' events go: the topic names (the edge subscribes sockets to them, receiving the names
 * through its ports so it need not import projections), the sink that publishes to them, and the frames of
 * one batch: every event serialized once, one frame per topic (a JSON array when several). Owns the topics'
 * spelling and the frame's form; what goes in a frame is the builders' (stream-feed.ts for the market
 * channel, stream-user-events.ts for the user channel). Separate so that both builders share one frame
 * form without importing each other or the feed.
 *
 * Imports nothing.
 */
export const marketTopic = (tokenId: string) => `market:${tokenId}`;
export const customTopic = (tokenId: string) => `market-custom:${tokenId}`;
export const LIFECYCLE_TOPIC = 'market-lifecycle';
export const userTopic = (wallet: string, conditionId?: string) => (conditionId === undefined ? `user:${wallet}` : `user:${wallet}:${conditionId}`);

/** Where frames go: uWS's topics (edge/ws/channels.ts), or a recorder in tests. */
export interface StreamSink {
  /** Whether any socket is subscribed to the topic. */
  wants(topic: string): boolean;
  publish(topic: string, frame: string): void;
}

/** The batch's serialized events per topic, in order; one frame per topic (a JSON array when several). */
export class Frames {
  private readonly byTopic = new Map<string, string[]>();

  add(topic: string, event: string): void {
    const list = this.byTopic.get(topic);
    if (list === undefined) this.byTopic.set(topic, [event]);
    else list.push(event);
  }

  addAll(topics: readonly string[], event: string): void {
    for (const t of topics) this.add(t, event);
  }

  /** Publishes every topic's frame; returns how many. */
  flush(sink: StreamSink, counters: { frames: number; events: number }): number {
    for (const [topic, list] of this.byTopic) {
      sink.publish(topic, list.length === 1 ? list[0] : '[' + list.join(',') + ']');
      counters.frames++;
      counters.events += list.length;
    }
    return this.byTopic.size;
  }
}
