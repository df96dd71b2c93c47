// Entry point of the signature pool's worker threads (see sig-pool.ts). Plain JavaScript on purpose:
// tsx registers its TypeScript loader on the main thread only (Node 20), so a worker started from a
// `.ts` file fails with ERR_UNKNOWN_FILE_EXTENSION even though it inherits `--import tsx`. This file
// imports sig-worker.ts directly when the thread can already load TypeScript, and registers tsx for
// this thread first when it cannot.
let mod;
try {
  mod = await import('./sig-worker.ts');
} catch (err) {
  if (err?.code !== 'ERR_UNKNOWN_FILE_EXTENSION') throw err;
  const { register } = await import('tsx/esm/api');
  register();
  // A new URL: the loader caches the failed attempt above under the plain one.
  mod = await import('./sig-worker.ts?tsx');
}

export const verifyOrders = mod.verifyOrders;
export const recoverClobAuth = mod.recoverClobAuth;
export const backend = mod.backend;
export const recoverDigests = mod.recoverDigests;
