/**
 * A message's HTML body made safe to show in `<iframe sandbox="" srcdoc=…>`: the sandbox (no `allow-scripts`)
 * runs no script, and a Content-Security-Policy meta put first in the head loads nothing remote (images only
 * from data: URLs unless the member asks for remote ones; styles inline only; no fonts, frames or fetches).
 * A `<meta http-equiv="refresh">` (a navigation no CSP directive stops) and `<base>` are dropped.
 * DOMParser builds an inert document: parsing runs nothing and loads nothing.
 */
export function previewDocument(html: string, remoteImages: boolean): string {
  const parsed = new DOMParser().parseFromString(html, 'text/html');
  for (const element of parsed.querySelectorAll('meta[http-equiv], base')) {
    const equiv = element.getAttribute('http-equiv')?.toLowerCase();
    if (element.tagName === 'BASE' || equiv === 'refresh' || equiv === 'content-security-policy') element.remove();
  }
  const policy = parsed.createElement('meta');
  policy.setAttribute('http-equiv', 'Content-Security-Policy');
  policy.setAttribute('content', contentSecurityPolicy(remoteImages));
  parsed.head.prepend(policy);
  return `<!doctype html>\n${parsed.documentElement.outerHTML}`;
}

export function contentSecurityPolicy(remoteImages: boolean): string {
  return `default-src 'none'; img-src data:${remoteImages ? ' https: http:' : ''}; style-src 'unsafe-inline'`;
}
