import { useSyncExternalStore, type AnchorHTMLAttributes, type MouseEvent } from 'react';

/**
 * A tiny router over the History API: the pages live under /console/ (the API answers index.html for each), a
 * link is a real <a href> (opens in a new tab, keyboard reachable), a click on it changes the page without a load.
 */

export const BASE = '/console';

const listeners = new Set<() => void>();
const notify = () => listeners.forEach((listener) => listener());
window.addEventListener('popstate', notify);

function subscribe(listener: () => void): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

const snapshot = () => location.pathname + location.search + location.hash;

export interface Route {
  /** The path below /console, always starting with '/'. */
  path: string;
  search: URLSearchParams;
  hash: string;
}

export function useRoute(): Route {
  const href = useSyncExternalStore(subscribe, snapshot);
  const url = new URL(href, location.origin);
  const below = url.pathname.startsWith(BASE) ? url.pathname.slice(BASE.length) : url.pathname;
  return { path: below === '' ? '/' : below.replace(/\/+$/, '') || '/', search: url.searchParams, hash: url.hash };
}

/** Goes to a console path ('/activity?tag=x'); `replace` keeps the history entry (filters, redirects). */
export function navigate(to: string, options: { replace?: boolean } = {}): void {
  const target = BASE + to;
  if (target === snapshot()) return;
  if (options.replace) history.replaceState(null, '', target);
  else history.pushState(null, '', target);
  notify();
  if (!options.replace) window.scrollTo(0, 0);
}

type LinkProps = Omit<AnchorHTMLAttributes<HTMLAnchorElement>, 'href'> & { to: string };

export function Link({ to, onClick, ...rest }: LinkProps) {
  const handle = (event: MouseEvent<HTMLAnchorElement>) => {
    onClick?.(event);
    if (event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey) return;
    event.preventDefault();
    navigate(to);
  };
  return <a href={BASE + to} onClick={handle} {...rest} />;
}
