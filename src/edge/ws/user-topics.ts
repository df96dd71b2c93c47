/**
 * The user channel's topics: a Map of topic to the sockets on it, in the JS heap, instead of uWS topics.
 * Owns which sockets are on which user topic; what a topic is named is the feed's (Topics, channels.ts), and
 * which topics a socket may join is the channels' (only its own wallets'). Separate because its reason to exist
 * is memory, not protocol, and it must stay exact under churn: a socket leaves every topic it joined, and a
 * topic with no socket left is deleted, so subscribe/unsubscribe cycles leave nothing behind.
 *
 * Why not uWS topics: uWS keeps its topics and their subscriber sets in C++, in glibc's main heap; freed at
 * close, that memory stays in the process (the heap cannot shrink past what is still allocated above it, and
 * nothing here can call malloc_trim). 400,000 user subscriptions (800 sockets x 500 markets) held 35 MB of it
 * after their sockets closed, 180 MB when the ids were distinct made-up ones (one uWS topic each). In the JS
 * heap the GC gives it back: a wallet's sockets are few, and the C++ fan-out only pays where thousands of
 * sockets share a topic (the market channel, whose topics are bounded by its tokens and its subscriptions by
 * maxSubscriptions). test/edge/ws/memory.test.ts checks that an 800-socket cycle ends within 10% of the RSS
 * it began with.
 *
 * Imports nothing: it holds sockets of any type and never sends to them (the channels do, counting bytes).
 */
export class UserTopics<S> {
  private readonly topics = new Map<string, Set<S>>();

  has(topic: string): boolean {
    return this.topics.has(topic);
  }

  /** The sockets on a topic, undefined when none is. */
  sockets(topic: string): ReadonlySet<S> | undefined {
    return this.topics.get(topic);
  }

  join(s: S, topic: string): void {
    const on = this.topics.get(topic);
    if (on === undefined) this.topics.set(topic, new Set([s]));
    else on.add(s);
  }

  leave(s: S, topic: string): void {
    const on = this.topics.get(topic);
    if (on === undefined) return;
    on.delete(s);
    if (on.size === 0) this.topics.delete(topic);
  }
}
