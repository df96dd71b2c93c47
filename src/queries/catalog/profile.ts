/** Wallet display profiles as read back (the writer is projections/catalog/writer.ts). */
import type { Profile } from '../../edge/schemas/admin.ts';
import type { Store } from '../../journal/env.ts';
import { profileKey } from '../../journal/keys.ts';

/** A wallet's admin-set display profile; every field "" when none was set. */
export function getProfile(store: Store, address: string): Profile {
  const a = address.toLowerCase();
  const p = store.profiles.get(profileKey(a)) as Partial<Profile> | undefined;
  return {
    address: a,
    name: p?.name ?? '',
    pseudonym: p?.pseudonym ?? '',
    bio: p?.bio ?? '',
    profileImage: p?.profileImage ?? '',
    profileImageOptimized: p?.profileImageOptimized ?? '',
  };
}
