"""The consent page (docs/oauth.md): what an app asks for, and a form where the person proves who
they are with a one-time connect code or an API key.

Text only: the client's self-declared name and URIs are escaped, `logo_uri` is never fetched, and
the redirect host is shown first, since it is where the code goes. The form is bound to the page by
a CSRF token that is both in the form and in a SameSite=Strict cookie (a cross-site post carries
no cookie) and whose hash the consent request holds (a replayed form finds the request used up).
The CSP has no `form-action`: Chromium applies it to the redirect that follows the post, which
would block the way back to the app (`cursor://...`, `http://127.0.0.1:<port>`)."""

from __future__ import annotations

import hmac
from functools import partial
from html import escape
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

import anyio.to_thread
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response

from mnemo.errors import AuthenticationError, DependencyError, ForbiddenError, OAuthError
from mnemo.services.oauth.metadata import CONSENT_PATH

if TYPE_CHECKING:
    from mnemo.bootstrap import Container
    from mnemo.services.oauth.server import Consent

COOKIE = "mnemo_consent"
PAGE_HEADERS = {
    "content-security-policy": "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'",
    "x-frame-options": "DENY",
    "referrer-policy": "no-referrer",
    "cache-control": "no-store",
    "x-content-type-options": "nosniff",
}
SCOPE_WORDS = {"memory:read": "read your memories", "memory:write": "add and change memories",
               "memory:delete": "delete memories"}
STYLE = ("body{font-family:system-ui,sans-serif;max-width:36rem;margin:2rem auto;padding:0 1rem;line-height:1.5}"
         ".host{font-size:1.4rem;font-weight:700;word-break:break-all}.muted{color:#555}.error{color:#a00}"
         "input{width:100%;padding:.5rem;margin:.25rem 0 1rem;box-sizing:border-box}button{padding:.5rem 1rem;margin-right:.5rem}")


def _page(title: str, body: str, status: int = 200) -> HTMLResponse:
    html = (f"<!doctype html><html lang=en><head><meta charset=utf-8><meta name=viewport content='width=device-width'>"
            f"<title>{escape(title)}</title><style>{STYLE}</style></head><body>{body}</body></html>")
    return HTMLResponse(html, status_code=status, headers=PAGE_HEADERS)


def message_page(title: str, message: str, status: int) -> HTMLResponse:
    return _page(title, f"<h1>{escape(title)}</h1><p>{escape(message)}</p>", status)


def consent_page(consent: Consent, issuer: str, error: str = "", status: int = 200) -> Response:
    request, client = consent.request, consent.client
    target = urlsplit(request.redirect_uri)
    where = target.hostname or f"{target.scheme}: app"
    name = str(client.metadata.get("client_name") or "an unnamed app")
    asked = request.scopes if request.scopes is not None else list(SCOPE_WORDS)
    scopes = "".join(f"<li>{escape(SCOPE_WORDS.get(s, s))} <span class=muted>({escape(s)})</span></li>" for s in asked)
    uri = client.metadata.get("client_uri")
    about = f"<p class=muted>It says its home page is {escape(str(uri))}.</p>" if uri else ""
    problem = f"<p class=error role=alert>{escape(error)}</p>" if error else ""
    body = (
        f"<h1>Connect an app to Mnemo</h1>"
        f"<p>After you approve, Mnemo sends you back to</p><p class=host>{escape(where)}</p>"
        f"<p class=muted>{escape(request.redirect_uri)}</p>"
        f"<p>The app calls itself <b>{escape(name)}</b> (its own words: Mnemo has not checked them).</p>{about}"
        f"<p>It asks to use <b>{escape(issuer + request.resource)}</b> to:</p><ul>{scopes}</ul>"
        f"<p class=muted>It gets only what your code or key may do.</p>{problem}"
        f"<form method=post action='{CONSENT_PATH}'>"
        f"<input type=hidden name=request value='{escape(request.request_id)}'>"
        f"<input type=hidden name=csrf value='{escape(consent.csrf)}'>"
        f"<label>Connect code (from your admin) or API key"
        f"<input name=credential type=password autocomplete=off required></label>"
        f"<label>User <span class=muted>(admin keys only; empty: default)</span><input name=user autocomplete=off></label>"
        f"<button name=action value=approve>Approve</button><button name=action value=deny formnovalidate>Deny</button>"
        f"</form>"
    )
    response = _page("Connect an app to Mnemo", body, status)
    secure = issuer.startswith("https://")
    response.set_cookie(COOKIE, consent.csrf, max_age=600, path=CONSENT_PATH, secure=secure, httponly=True, samesite="strict")
    return response


def _same_site(request: Request, issuer: str) -> bool:
    """A browser says where a post came from: refuse any other site (Sec-Fetch-Site, else Origin).

    `Origin: null` is an opaque origin (a sandboxed frame, a data: URL, a cross-site redirect) and
    never vouches for a post. Our own page sends it too, because its Referrer-Policy is no-referrer
    (Fetch: a non-GET request under no-referrer serialises its origin as null; Chromium 156 does),
    but with `Sec-Fetch-Site: same-origin`, which only the browser sets: that is what lets it pass."""
    site = request.headers.get("sec-fetch-site")
    if site is not None and site not in ("same-origin", "none"):
        return False
    origin = request.headers.get("origin")
    if origin == "null":
        return site is not None
    if origin is not None:
        parts = urlsplit(issuer)
        return origin.rstrip("/") == f"{parts.scheme}://{parts.netloc}"
    return True  # neither header (not a current browser): the SameSite=Strict cookie still binds the form


async def show(request: Request, services: Container) -> Response:
    try:
        consent = await anyio.to_thread.run_sync(services.oauth.show, request.query_params.get("request", ""))
    except OAuthError as exc:
        return message_page("This link has expired", exc.message, 400)
    return consent_page(consent, services.settings.issuer)


async def decide(request: Request, services: Container) -> Response:
    issuer = services.settings.issuer
    form = await request.form()
    fields = {k: v if isinstance(v, str) else "" for k, v in form.items()}
    csrf = fields.get("csrf", "")
    cookie = request.cookies.get(COOKIE, "")
    if not _same_site(request, issuer) or not csrf or not hmac.compare_digest(cookie.encode(), csrf.encode()):
        return message_page("Refused", "This form did not come from Mnemo's consent page in this browser.", 403)
    request_id = fields.get("request", "")
    try:
        location = await anyio.to_thread.run_sync(partial(
            services.oauth.decide, request_id, csrf, approve=fields.get("action") != "deny",
            credential=fields.get("credential", ""), user_id=fields.get("user") or None))
    except AuthenticationError as exc:
        try:
            return consent_page(await anyio.to_thread.run_sync(services.oauth.show, request_id), issuer, exc.message, 401)
        except OAuthError as gone:
            return message_page("Not connected", gone.message, 400)
    except ForbiddenError as exc:
        return message_page("Refused", exc.message, 403)
    except OAuthError as exc:
        return message_page("Not connected", exc.message, 400)
    except DependencyError as exc:
        return message_page("Try again", exc.message, 503)
    return RedirectResponse(location, status_code=303, headers={"cache-control": "no-store", "referrer-policy": "no-referrer"})
