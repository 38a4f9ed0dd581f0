import { ApiError } from '../api/client.js';

/** An error as the user should read it: the API's detail and each field it names. */
export function ErrorNote({ error }: { error: Error | undefined }) {
  if (!error) return null;
  const fields = error instanceof ApiError ? error.fields : [];
  return (
    // A <div>, not a <p>: the field errors are a list, which a paragraph may not hold.
    <div role="alert" class="error-note">
      <strong>{error instanceof ApiError ? `${error.code}: ` : 'Error: '}</strong>
      {error.message}
      {fields.length > 0 && (
        <ul>
          {fields.map((f) => (
            <li key={f.field}>
              <code>{f.field}</code>: {f.message}
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}
