/**
 * `provider_login <url> <account>` for the doc runner (test/docs): the JavaScript twin of
 * provider-login.ts. Opens a provider's authorization URL, signs in as <account> at its login
 * form (cookies kept, redirects followed) and prints the address the provider sends the browser
 * back to.
 */
const [authorizationUrl, login] = process.argv.slice(2);
const origin = new URL(authorizationUrl).origin;
const jar = new Map();
let url = authorizationUrl;
let body;
for (let step = 0; step < 12; step++) {
  const res = await fetch(url, {
    method: body === undefined ? 'GET' : 'POST',
    body,
    redirect: 'manual',
    headers: { cookie: [...jar].map(([k, v]) => `${k}=${v}`).join('; '), ...(body === undefined ? {} : { 'content-type': 'application/x-www-form-urlencoded' }) },
  });
  for (const c of res.headers.getSetCookie()) {
    const pair = c.split(';')[0];
    jar.set(pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1));
  }
  if (res.status >= 300 && res.status < 400) {
    const next = new URL(res.headers.get('location'), url);
    if (next.origin !== origin) {
      process.stdout.write(`${next.href}\n`);
      process.exit(0);
    }
    url = next.href;
    body = undefined;
    continue;
  }
  const html = await res.text();
  const action = /<form method="post" action="([^"]+)"/.exec(html)?.[1];
  if (!action) throw new Error(`no sign-in form at ${url} (${res.status}): ${html.slice(0, 500)}`);
  const form = new URLSearchParams([...html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)].map((m) => [m[1], m[2]]));
  form.set('login', login);
  url = new URL(action, url).href;
  body = form.toString();
}
throw new Error('the provider never sent the browser back');
