/**
 * Why the user channel's credentials were refused (the `userChannel` of refusals/auth.ts's explainer, sent as
 * the error frame before the 4001 close, edge/ws/user-channel.ts): the key (unknown, pending, revoked, a
 * builder key), the secret (does not decode, sent as hex, another key's, swapped with the passphrase, or simply
 * not this key's), the passphrase. No HMAC is tried: the channel takes the secret itself, so a mistake is one
 * comparison each. Whether the passphrase is right is said only where the secret sent proves the caller holds
 * one of the wallet's; otherwise only to the key's wallet (`owner`, on GET /refusals).
 *
 * Separate because it is the one diagnosis that sees a secret in the clear, and the only one with no
 * signature to replay. Imports the shared checks and what it is handed; never edge/auth/auth.ts.
 */
import type { Refusal } from './reason.ts';
import type { AuthExplainer, AuthExplainerDeps } from './auth-ports.ts';
import { CREATE_ROUTE, KIND_WORD, keyName, kindOf, refusal, sameBytes, type KeyChecks } from './credential-checks.ts';

/** The explainer's `userChannel`, bound to the keys and rules it was handed. */
export function userChannelExplainer(deps: Pick<AuthExplainerDeps, 'keys' | 'rules'>, checks: KeyChecks): AuthExplainer['userChannel'] {
  const { keys, rules } = deps;
  const { keyStateProblem, otherKeys, passphraseOwner } = checks;
  return (auth): Refusal => {
    const m = keys.forDiagnosis(auth.apiKey);
    const name = keyName(auth.apiKey, 'apiKey');
    if (m === undefined) return refusal('auth_key', `${name} is not known to this server: API keys issued by the platform or by another server do not work here; create one with ${CREATE_ROUTE.trading}`);
    const state = keyStateProblem(m, name);
    if (state !== undefined) return state;
    const kind = kindOf(m.record);
    if (kind === 'builder') return refusal('auth_key', `${name} is a builder key: it proves no wallet on the user channel; authenticate with a trading or read-only key`);
    const secret = rules.decodeSecret(auth.secret);
    const secretOk = secret !== undefined && sameBytes(secret, m.hmacKey);
    const passOk = sameBytes(Buffer.from(auth.passphrase), m.passphrase);
    if (!secretOk) {
      const swapped = sameBytes(Buffer.from(auth.secret), m.passphrase) && sameBytes(rules.decodeSecret(auth.passphrase) ?? Buffer.alloc(0), m.hmacKey);
      if (swapped) return refusal('auth_hmac', `the secret and passphrase of ${name} are swapped: "secret" takes the secret, "passphrase" the passphrase`);
      // Whether the passphrase is right is said only where the secret sent proves the caller holds one of
      // the wallet's (hex, another key's); otherwise only to the key's wallet, on GET /refusals.
      const nor = passOk ? '' : ' (nor is the passphrase)';
      const unproven = (text: string): Refusal => (nor === '' ? refusal('auth_hmac', text) : { class: 'auth_hmac', text, owner: { class: 'auth_hmac', text: text + nor } });
      if (secret === undefined) return unproven(`the secret does not decode as base64 (url-safe or standard, ${auth.secret.length} characters arrived): send it as issued with ${name}`);
      if (/^[0-9a-fA-F]+$/.test(auth.secret) && auth.secret.length % 2 === 0 && sameBytes(Buffer.from(auth.secret, 'hex'), m.hmacKey)) {
        return refusal('auth_hmac', `the secret was sent as hex: send it as issued (base64url)${nor}`);
      }
      for (const r of otherKeys(m.record.address, m.record.apiKey)) {
        const other = keys.forDiagnosis(r.apiKey);
        if (other !== undefined && sameBytes(secret, other.hmacKey)) {
          return refusal('auth_hmac', `the secret is API key ${r.apiKey}'s (${KIND_WORD[kindOf(r)]} of the same wallet), not ${name}'s: send one key's id, secret and passphrase together${nor}`);
        }
      }
      return unproven(`the secret is not ${name}'s (it decodes to ${secret.length} bytes, which are not this key's)`);
    }
    if (!passOk) {
      const other = passphraseOwner(m.record.address, m.record.apiKey, Buffer.from(auth.passphrase));
      if (other !== undefined) return refusal('auth_passphrase', `the passphrase is API key ${other.apiKey}'s (${KIND_WORD[kindOf(other)]} of the same wallet), not ${name}'s`);
      return refusal('auth_passphrase', `the passphrase is not ${name}'s (${auth.passphrase.length} characters arrived; passphrases are 64 hex characters, as issued with the key)`);
    }
    return refusal('auth_key', `the credentials of ${name} check now: the message was refused as it arrived (the key may have changed state since)`);
  };
}
