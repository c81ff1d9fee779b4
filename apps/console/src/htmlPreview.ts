/**
 * A message's HTML body made safe to show in `<iframe sandbox="" srcdoc=…>`: the sandbox (no `allow-scripts`)
 * runs no script, and a Content-Security-Policy meta put first in the head loads nothing remote (images only
 * from data: URLs unless the member asks for remote ones; styles inline only; no fonts, frames or fetches).
 * A `<meta http-equiv="refresh">` (a navigation no CSP directive stops) and `<base>` are dropped.
 * DOMParser builds an inert document: parsing runs nothing and loads nothing.
 *
 * The policy alone is not enough: the browser's preload scanner may ask for a stylesheet or an image it sees in the
 * markup before the policy is applied (the request is then refused, but it was made). So what the policy would
 * refuse anyway is taken out of the markup as well: scripts, external stylesheets and other `<link>`s, frames and
 * plug-ins always; remote image addresses (`src`, `srcset`, `background`) unless the member asked for them.
 */
export function previewDocument(html: string, remoteImages: boolean): string {
  const parsed = new DOMParser().parseFromString(html, 'text/html');
  for (const element of parsed.querySelectorAll('meta[http-equiv], base')) {
    const equiv = element.getAttribute('http-equiv')?.toLowerCase();
    if (element.tagName === 'BASE' || equiv === 'refresh' || equiv === 'content-security-policy') element.remove();
  }
  for (const element of parsed.querySelectorAll('script, link, iframe, frame, frameset, object, embed, applet')) {
    element.remove();
  }
  if (!remoteImages) {
    for (const element of parsed.querySelectorAll('[src], [srcset], [background], [poster]')) {
      for (const name of ['src', 'srcset', 'background', 'poster']) {
        const value = element.getAttribute(name);
        if (value !== null && !value.trim().toLowerCase().startsWith('data:')) element.removeAttribute(name);
      }
    }
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
