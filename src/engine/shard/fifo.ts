/**
 * The queue the shard link keeps per shard, twice: the commands in flight (answered in order, so each RESULT
 * belongs to the oldest) and the encoded commands waiting for ring space. A plain array's shift() is O(n);
 * this one moves a head index and compacts once the dead prefix is both long and the larger half.
 */
/** FIFO with O(1) shift. */
export class Fifo<T> {
  private items: (T | undefined)[] = [];
  private head = 0;
  get length(): number {
    return this.items.length - this.head;
  }
  push(v: T): void {
    this.items.push(v);
  }
  shift(): T | undefined {
    if (this.head >= this.items.length) return undefined;
    const v = this.items[this.head];
    this.items[this.head++] = undefined;
    if (this.head > 1024 && this.head * 2 > this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
    return v;
  }
  drain(): T[] {
    const out = this.items.slice(this.head) as T[];
    this.items = [];
    this.head = 0;
    return out;
  }
}
