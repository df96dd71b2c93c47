/**
 * Schemas of the read-only and builder API-key routes (edge/routes/clob/auth.ts). Both kinds are credential triples
 * of the trading key's form (edge/auth/auth.ts): a read-only key signs the L2 headers of the routes that read, a
 * builder key signs the builder headers. Decisions: docs/decisions/authentication.md, "Authentication".
 */
import { Type, type Static } from '@sinclair/typebox';

const Uuid = Type.String({ maxLength: 64, description: 'API key (UUID)' });
const Address = Type.String({ pattern: '^0x[0-9a-fA-F]{40}$', description: 'wallet address, any case' });

/** POST /auth/readonly-api-key: the platform client reads `apiKey`; the secret and passphrase sign with it. */
export const ReadonlyKeyCreated = Type.Object({
  apiKey: Uuid,
  secret: Type.String({ description: '32 bytes, base64url with padding: the HMAC key of its requests' }),
  passphrase: Type.String({ description: '64 hex characters' }),
});

/** GET /auth/readonly-api-keys: the usable read-only keys of the caller's wallet, oldest first. */
export const ReadonlyKeysList = Type.Array(Uuid);

export const DeleteReadonlyKeyBody = Type.Object({ key: Uuid });
export type DeleteReadonlyKeyBody = Static<typeof DeleteReadonlyKeyBody>;

export const ValidateReadonlyQuery = Type.Object({ address: Address, key: Uuid });
export const ValidateReadonlyReply = Type.Object({ valid: Type.Boolean({ description: 'a usable read-only key of that wallet' }) });

/** POST /auth/builder-api-key: the platform client's BuilderApiKey, plus the wallet's builder code. */
export const BuilderKeyCreated = Type.Object({
  key: Uuid,
  secret: Type.String({ description: '32 bytes, base64url with padding: the HMAC key of the builder headers' }),
  passphrase: Type.String({ description: '64 hex characters' }),
  builderCode: Type.String({ description: 'bytes32: what the wallet\'s orders name in `builder` to be attributed to it' }),
});

/** GET /auth/builder-api-key: the platform client's BuilderApiKeyResponse[], revoked keys included. */
export const BuilderKeysList = Type.Array(
  Type.Object({
    key: Uuid,
    builderCode: Type.String(),
    createdAt: Type.String({ description: 'ISO 8601' }),
    revokedAt: Type.Optional(Type.String({ description: 'ISO 8601, once revoked' })),
  }),
);
