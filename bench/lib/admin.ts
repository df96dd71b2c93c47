/**
 * The admin API as the sandbox benches call it: one JSON request with the bench's token, anything but 200
 * a thrown error (a bench that meets a refusal measures nothing), the answer's JSON.
 */
export async function admin(base: string, method: string, path: string, body?: unknown): Promise<any> {
  const r = await fetch(`${base}${path}`, { method, headers: { authorization: 'Bearer bench', 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
  if (r.status !== 200) throw new Error(`${method} ${path}: ${r.status} ${await r.text()}`);
  return r.json();
}
