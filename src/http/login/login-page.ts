/** What the login page shows. */
export interface LoginPageView {
  /** Where the form posts (`/dashboard/login`). */
  action: string;
  /** Where to go once signed in (a path under the dashboard). */
  next: string;
  /** Users with passwords are configured: the name and password form is shown. */
  passwords: boolean;
  /** The identity provider's sign-in address and its name, when one is configured. */
  oidc?: { href: string; name: string };
  /** Why the last attempt failed, shown above the form. */
  problem?: string;
  /** The name typed last (kept after a failure). */
  name?: string;
}

const esc = (s: unknown): string =>
  String(s ?? '').replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

/**
 * The console's login page: a name and password form (no script: it posts, same-origin, and the
 * server answers with a redirect or this page and the problem), and the identity provider's button.
 * Its fields come first on a phone as on a desktop.
 */
export function renderLogin(v: LoginPageView): string {
  const form = v.passwords
    ? `<form method="post" action="${esc(v.action)}" autocomplete="on">
<input type="hidden" name="next" value="${esc(v.next)}">
<label>name <input name="name" autocomplete="username" required autofocus value="${esc(v.name ?? '')}"></label>
<label>password <input name="password" type="password" autocomplete="current-password" required></label>
<button type="submit">Sign in</button></form>`
    : '';
  const oidc = v.oidc ? `<p><a class="button" id="oidc" href="${esc(v.oidc.href)}">Sign in with ${esc(v.oidc.name)}</a></p>` : '';
  const none =
    !v.passwords && !v.oidc ? '<p>No users are configured: open the console with its token (<code>/dashboard?token=TOKEN</code>).</p>' : '';
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1"><title>Sign in · Reflex console</title><link rel="icon" href="data:,">
<style>body{font:16px system-ui,sans-serif;margin:0;padding:1rem;color:#1b1f24;background:#f4f5f7}main{max-width:22rem;margin:2rem auto;background:#fff;padding:1.25rem;border-radius:8px;box-shadow:0 1px 3px #0002}
label{display:block;margin:.75rem 0}input{display:block;width:100%;box-sizing:border-box;padding:.5rem;font:inherit;margin-top:.25rem}button,.button{display:inline-block;padding:.55rem 1rem;font:inherit;background:#1f5fbf;color:#fff;border:0;border-radius:4px;text-decoration:none;cursor:pointer}
#problem{color:#a1131a;font-weight:600}</style></head>
<body><main><h1>Reflex console</h1>
${v.problem ? `<p id="problem" role="alert">${esc(v.problem)}</p>` : ''}
${form}${oidc}${none}
</main></body></html>`;
}
