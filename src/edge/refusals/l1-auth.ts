/**
 * Why L1 headers were refused (the `l1` of refusals/auth.ts's explainer): the headers present, the address
 * well formed, the signature 0x + 130 hex, the timestamp as credential-checks.ts judges it, the nonce a
 * canonical uint256; then the signature is recovered on the signature pool under the configured ClobAuth
 * domain and under each of the platform's (known-domains.ts KNOWN_AUTH_DOMAINS), and the reason names the
 * domain under which it recovers to the address (the SDK that signs for the platform's mainnet whatever it is
 * pointed at), or what it recovers to and what to sign. A pool that cannot answer (closing) leaves the reason
 * at what to sign; the promise never rejects.
 *
 * Cost: at most 1 + KNOWN_AUTH_DOMAINS recoveries on the pool, priced (budget.ts RECOVERY_COST each) for the
 * client's network and the address named, taken at their most before and given back after. Separate because it
 * is the one asynchronous diagnosis, and the only one that recovers signatures. Imports auth/eip712.ts's domain
 * type, the known domains, the budget and the shared checks; never edge/auth/auth.ts.
 */
import { parseAddress } from '../../domain/ids.ts';
import type { AuthDomain } from '../auth/eip712.ts';
import { KNOWN_AUTH_DOMAINS, profileAdvice } from './known-domains.ts';
import { RECOVERY_COST, type DiagnosisBudget } from './budget.ts';
import { shown, type Refusal } from './reason.ts';
import type { AuthExplainer, AuthExplainerDeps } from './auth-ports.ts';
import { hyphenName, platformName, refusal, type KeyChecks } from './credential-checks.ts';

/** The secp256k1 group order halved: a signature with a larger s is the malleated twin of a low-s one (eip712.ts). */
const HALF_N = 0x7fffffffffffffffffffffffffffffff5d576e7357a4501ddfe92f46681b20a0n;

/** The explainer's `l1`, bound to what it was handed and the budget it shares with the HMAC diagnosis. */
export function l1Explainer(deps: Pick<AuthExplainerDeps, 'rules' | 'pool' | 'auth'>, checks: KeyChecks, budget: DiagnosisBudget): AuthExplainer['l1'] {
  const { rules, pool } = deps;
  const ownDomain = rules.authDomainOf(deps.auth);
  const { nearMisses, timestampProblem } = checks;
  return async (headers, ip, otherHeaders): Promise<Refusal> => {
    const n = rules.l2;
    const present = [n.address, n.signature, n.timestamp].map((names) => rules.header(headers, names));
    const missing = [n.address, n.signature, n.timestamp].filter((_, i) => present[i] === undefined);
    if (missing.length > 0) {
      let text = `missing L1 header${missing.length > 1 ? 's' : ''} ${missing.map(platformName).join(', ')} (POLY_NONCE is optional, default 0); the SVC_ spellings are read too, and underscored names also hyphenated (${hyphenName(missing[0]!)})`;
      const misses = nearMisses({ headers, otherHeaders }, missing);
      if (misses.length > 0) text += `; arrived but not read: ${misses.join(', ')}`;
      return refusal('auth_header', text);
    }
    const [addressText, signature, timestamp] = present as [string, string, string];
    const address = parseAddress(addressText);
    if (address === undefined) return refusal('auth_header', `POLY_ADDRESS ${shown(addressText)} is not an address: expected 0x + 40 hex (42 characters), got ${addressText.length} characters`);
    if (!rules.l1SignatureForm(signature)) {
      let why: string;
      if (/^[0-9a-fA-F]{130}$/.test(signature)) why = 'it lacks the 0x prefix';
      else if (rules.digestForm(signature)) why = 'it has the form of an L2 HMAC; L1 routes take the EIP-712 ClobAuth signature';
      else why = `got ${signature.length} characters`;
      return refusal('auth_header', `POLY_SIGNATURE is not an EIP-712 signature (0x + 130 hex, r s v): ${why}`);
    }
    const late = timestampProblem('L1', n.timestamp, timestamp);
    if (late !== undefined) return late;
    const nonceText = rules.header(headers, n.nonce);
    const nonce = nonceText === undefined || nonceText === '' ? '0' : rules.canonicalNonce(nonceText);
    if (nonce === undefined) return refusal('auth_header', `POLY_NONCE ${shown(nonceText!)} is not a uint256 in decimal`);

    const fields = { address, timestamp, nonce, signature };
    const chain = `this exchange's ClobAuth domain (chain ${ownDomain.chainId})`;
    const sign = `sign ClobAuth {address ${address}, timestamp "${timestamp}", nonce ${nonce}} for {name "${ownDomain.name}", version "${ownDomain.version}", chainId ${ownDomain.chainId}} (GET /exchange-info)`;
    const unexplained = (why: string) => refusal('auth_l1_signature', `L1 signature does not recover to POLY_ADDRESS ${address} under ${chain}: ${sign}; ${why}`);
    // Priced by its recoveries, for the caller's network and the address it names; what it did not use goes back.
    const by = { ip, wallet: address };
    const reserved = (1 + KNOWN_AUTH_DOMAINS.length) * RECOVERY_COST;
    if (!budget.take(by, reserved)) return unexplained("the platform's domains were not tried (diagnosis is busy)");
    let recoveries = 0;
    // The pool may be closing: the refusal stands, and the reason says what is known without recovering.
    const recover = (d: AuthDomain) => {
      recoveries++;
      return pool.recoverClobAuth(fields, d).catch(() => null);
    };
    try {
      const own = await recover(ownDomain);
      if (own === null) return unexplained('the signature pool could not be asked what it recovers to');
      if (own === address) return refusal('auth_l1_signature', `L1 signature recovers to POLY_ADDRESS under ${chain} now: the request was refused as it arrived (its timestamp may have left the window since)`);
      if (own === undefined) {
        const v = parseInt(signature.slice(130, 132), 16);
        const s = BigInt('0x' + signature.slice(66, 130));
        let why: string;
        if (![0, 1, 27, 28].includes(v)) why = `its last byte (v) is 0x${signature.slice(130, 132)}, expected 1b or 1c (27 or 28)`;
        else if (s > HALF_N) why = 'its s is in the upper half of the curve order: send the low-s form every standard signer emits';
        else why = 'r or s is out of range';
        return refusal('auth_l1_signature', `L1 signature does not recover to any address: ${why}`);
      }
      for (const k of KNOWN_AUTH_DOMAINS) {
        const d = k.domain;
        if (d.chainId === ownDomain.chainId && d.name === ownDomain.name && d.version === ownDomain.version) continue;
        if ((await recover(d)) === address) {
          return refusal('auth_l1_signature', `L1 signature recovers to ${own} under ${chain}; it recovers to the address under ${k.label}: sign ClobAuth for chain ${ownDomain.chainId} (GET /exchange-info)${profileAdvice(k.profile)}`);
        }
      }
      return refusal('auth_l1_signature', `L1 signature recovers to ${own} under ${chain}, not to POLY_ADDRESS ${address}, nor under the platform's domains: ${sign}`);
    } finally {
      budget.refund(by, reserved - recoveries * RECOVERY_COST);
    }
  };
}
