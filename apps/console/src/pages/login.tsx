import { useState } from 'preact/hooks';
import { call } from '../api/client.js';
import type { Whoami } from '../api/types.js';
import { ErrorNote } from '../components/error-note.js';
import { useMounted } from '../hooks/use-mounted.js';
import { storeKey } from '../session.js';

/**
 * Takes an API key, checks it with `GET /v1/whoami` and keeps it for this tab only.
 */
export function Login({ onLogin }: { onLogin: (who: Whoami) => void }) {
  const [key, setKey] = useState('');
  const [error, setError] = useState<Error>();
  const [busy, setBusy] = useState(false);
  const mounted = useMounted();
  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      const who = await call<Whoami>('GET', '/v1/whoami', undefined, key.trim());
      storeKey(key.trim());
      onLogin(who);
    } catch (err) {
      if (mounted()) setError(err instanceof Error ? err : new Error(String(err)));
    } finally {
      if (mounted()) setBusy(false);
    }
  };
  return (
    <main class="container login">
      <article>
        <h1>Kairos console</h1>
        <form onSubmit={(e) => void submit(e)}>
          <label for="api-key">
            API key
            <input
              id="api-key"
              name="api-key"
              type="password"
              autoComplete="off"
              required
              value={key}
              onInput={(e) => setKey(e.currentTarget.value)}
              aria-describedby="api-key-help"
            />
            <small id="api-key-help">
              Kept in this tab only (session storage) and sent to this API alone; closing the tab logs out.
            </small>
          </label>
          <ErrorNote error={error} />
          <button type="submit" aria-busy={busy} disabled={busy}>
            Log in
          </button>
        </form>
      </article>
    </main>
  );
}
