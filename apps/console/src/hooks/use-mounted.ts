import { useCallback, useEffect, useRef } from 'preact/hooks';

/**
 * Whether the component is still on the page. An async handler (a confirmed action, a login) may
 * outlive its component (the action navigates away or removes its own button), and its late state
 * updates must then be dropped.
 */
export function useMounted(): () => boolean {
  const mounted = useRef(true);
  useEffect(() => {
    mounted.current = true;
    return () => {
      mounted.current = false;
    };
  }, []);
  return useCallback(() => mounted.current, []);
}
