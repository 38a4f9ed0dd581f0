import { createContext } from 'preact';
import { useContext } from 'preact/hooks';
import type { Whoami } from './api/types.js';

export interface Session {
  readonly who: Whoami;
  /** A key of every tenant (`*`) picks the tenant it looks at; a tenant key has its own. */
  readonly admin: boolean;
  /** The tenant the pages show ('' for an admin who has not picked one). */
  readonly tenant: string;
  readonly setTenant: (tenant: string) => void;
  readonly logout: () => void;
}

export const SessionContext = createContext<Session | undefined>(undefined);

/** The logged-in session; only pages behind the login use it. */
export function useSession(): Session {
  const s = useContext(SessionContext);
  if (!s) throw new Error('useSession outside a logged-in page');
  return s;
}
