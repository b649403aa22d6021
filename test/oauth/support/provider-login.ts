/**
 * Signs in at a provider's login page over plain HTTP, as a browser would (cookies kept,
 * redirects followed, the sign-in form posted with its hidden fields), until the provider sends
 * the browser away from itself: answers that address (the Plinth callback with code and state).
 */
export async function loginAtProvider(authorizationUrl: string, login: string): Promise<URL> {
  const origin = new URL(authorizationUrl).origin;
  const jar = new Map<string, string>();
  let url = authorizationUrl;
  let body: string | undefined;
  for (let step = 0; step < 12; step++) {
    const res = await fetch(url, {
      method: body === undefined ? 'GET' : 'POST',
      body,
      redirect: 'manual',
      headers: {
        cookie: [...jar].map(([k, v]) => `${k}=${v}`).join('; '),
        ...(body === undefined ? {} : { 'content-type': 'application/x-www-form-urlencoded' }),
      },
    });
    for (const c of res.headers.getSetCookie()) {
      const pair = c.split(';')[0] ?? '';
      const at = pair.indexOf('=');
      jar.set(pair.slice(0, at), pair.slice(at + 1));
    }
    if (res.status >= 300 && res.status < 400) {
      const next = new URL(res.headers.get('location') ?? '', url);
      if (next.origin !== origin) return next;
      url = next.href;
      body = undefined;
      continue;
    }
    const html = await res.text();
    const action = /<form method="post" action="([^"]+)"/.exec(html)?.[1];
    if (!action) throw new Error(`no sign-in form at ${url} (${res.status}): ${html.slice(0, 300)}`);
    const form = new URLSearchParams([...html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)].map((m): [string, string] => [m[1] as string, m[2] as string]));
    form.set('login', login);
    url = new URL(action, url).href;
    body = form.toString();
  }
  throw new Error('the provider never sent the browser back');
}
