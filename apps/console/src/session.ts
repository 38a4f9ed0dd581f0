/**
 * The API key lives in this tab's session storage only: gone when the tab closes, never in
 * local storage or a cookie, never sent anywhere but the API's own origin.
 */
const KEY = 'kairos.apiKey';

export function storedKey(): string | null {
  return sessionStorage.getItem(KEY);
}

export function storeKey(key: string): void {
  sessionStorage.setItem(KEY, key);
}

export function clearKey(): void {
  sessionStorage.removeItem(KEY);
}
