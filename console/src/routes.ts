/**
 * The console's pages are paths under its base (`/console/tasks`); the gateway answers every such
 * path with the page, which shows the one the path names.
 */
import { useEffect, useState } from 'preact/hooks';

const BASE = import.meta.env.BASE_URL;

function routeOf(pathname: string): string {
  return pathname.startsWith(BASE) ? pathname.slice(BASE.length).replace(/\/+$/, '') : '';
}

export const hrefOf = (route: string): string => `${BASE}${route}`;

export function useRoute(): [string, (route: string) => void] {
  const [route, setRoute] = useState(() => routeOf(window.location.pathname));
  useEffect(() => {
    const onPop = () => setRoute(routeOf(window.location.pathname));
    window.addEventListener('popstate', onPop);
    return () => window.removeEventListener('popstate', onPop);
  }, []);
  const go = (next: string) => {
    if (next !== route) window.history.pushState(null, '', hrefOf(next));
    setRoute(next);
  };
  return [route, go];
}
