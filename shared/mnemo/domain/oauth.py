"""OAuth 2.1 rules that need no I/O (docs/oauth.md): which redirect URIs a public client may register
and how a request's redirect matches one, PKCE S256, a grant as the intersection of scopes, and which
MCP resource a path or a `resource` parameter names."""

from __future__ import annotations

import base64
import hashlib
import hmac
import ipaddress
import re
from collections.abc import Iterable
from urllib.parse import urlsplit

from mnemo.domain.models import Permission

# What OAuth can grant. Never `admin`: it reads every user and manages keys, which no connector needs.
SCOPES: tuple[str, ...] = (Permission.READ.value, Permission.WRITE.value, Permission.DELETE.value)
MCP_ROOT = "/mcp"
# `/api/mcp` is the same server as `/mcp` (the alias some clients are configured with): one resource.
ALIASES = {"/api/mcp": MCP_ROOT}
MAX_REDIRECT_URI = 2000
LOOPBACK_HOSTS = frozenset({"127.0.0.1", "::1", "localhost"})
# Schemes that run, read or embed instead of handing a code to an app: refused at registration.
REFUSED_SCHEMES = frozenset({
    "javascript", "data", "file", "vbscript", "blob", "about", "filesystem", "view-source",
    "ftp", "ws", "wss", "mailto", "tel", "sms",
})
_SCHEME = re.compile(r"^[a-z][a-z0-9+.\-]*$")
_VERIFIER = re.compile(r"^[A-Za-z0-9\-._~]{43,128}$")  # RFC 7636 §4.1


def redirect_problem(uri: str) -> str | None:
    """Why `uri` may not be registered as a redirect, or None: https without userinfo or fragment,
    http only on a loopback host (any port, RFC 8252 §7.3), or a private-use scheme (RFC 8252 §7.1,
    e.g. `cursor://anysphere.cursor-mcp/oauth/callback`)."""
    if len(uri) > MAX_REDIRECT_URI:
        return f"redirect_uris: at most {MAX_REDIRECT_URI} characters"
    if any(c.isspace() or ord(c) < 0x20 or ord(c) == 0x7F for c in uri):
        return "redirect_uris: must not contain spaces or control characters"
    if "#" in uri:
        return "redirect_uris: must not have a fragment"
    try:
        parts = urlsplit(uri)
        _ = parts.port  # raises on a malformed port
    except ValueError:
        return f"redirect_uris: {uri[:80]!r} is not a valid URI"
    scheme = parts.scheme.lower()
    if not scheme or not _SCHEME.match(scheme):
        return f"redirect_uris: {uri[:80]!r} has no valid scheme"
    if scheme in REFUSED_SCHEMES:
        return f"redirect_uris: the {scheme}: scheme is not allowed"
    if "@" in parts.netloc:
        return "redirect_uris: must not carry userinfo (user@host)"
    host = (parts.hostname or "").lower()
    if scheme == "https":
        return None if host else "redirect_uris: an https URI needs a host"
    if scheme == "http":
        if host in LOOPBACK_HOSTS:
            return None
        return "redirect_uris: http is allowed only on a loopback host (127.0.0.1, [::1], localhost)"
    return None  # a private-use scheme: the operating system hands the code to the app that owns it


def is_loopback(uri: str) -> bool:
    parts = urlsplit(uri)
    return parts.scheme.lower() == "http" and (parts.hostname or "").lower() in LOOPBACK_HOSTS


def redirect_matches(registered: Iterable[str], requested: str) -> bool:
    """Exact string match, except that a loopback http redirect matches on everything but the port
    (RFC 8252 §7.3: native apps bind whatever port is free at the moment)."""
    wanted = list(registered)
    if requested in wanted:
        return True
    if not is_loopback(requested):
        return False
    asked = urlsplit(requested)
    if "@" in asked.netloc or asked.fragment:
        return False
    return any(
        (known.hostname, known.path or "/", known.query) == (asked.hostname, asked.path or "/", asked.query)
        for known in (urlsplit(uri) for uri in wanted if is_loopback(uri))
    )


def s256(verifier: str) -> str:
    return base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).decode().rstrip("=")


def pkce_matches(verifier: str, challenge: str) -> bool:
    """RFC 7636 S256: a well-formed verifier whose hash is the challenge (compared in constant time)."""
    return bool(_VERIFIER.match(verifier)) and hmac.compare_digest(s256(verifier), challenge)


def granted_scopes(asked: Iterable[str] | None, held: Iterable[str]) -> tuple[str, ...]:
    """What a consent grants: the scopes asked for (None: every scope OAuth offers) that the credential
    used on the consent page holds (`admin` holds them all). May be empty: the caller refuses that."""
    held_set = set(held)
    if Permission.ADMIN.value in held_set:
        held_set |= set(SCOPES)
    asked_set = set(SCOPES) if asked is None else set(asked)
    return tuple(s for s in SCOPES if s in asked_set and s in held_set)


def resource_of_path(path: str) -> str:
    """The MCP resource a request path belongs to: `/api/mcp` → `/mcp`, `/mcp/facts/` → `/mcp/facts`."""
    path = path.rstrip("/") or "/"
    return ALIASES.get(path, path)


def resource_paths(profiles: Iterable[str]) -> list[str]:
    """Every MCP resource: `/mcp` and `/mcp/<profile>` for each named profile ("" is `/mcp`)."""
    return [f"{MCP_ROOT}/{p}" if p else MCP_ROOT for p in profiles]


def canonical_resource(issuer: str, resource: str | None, profiles: Iterable[str]) -> str | None:
    """The resource path a `resource` parameter (RFC 8707) names on this server, or None when it names
    none of ours. Omitted: `/mcp`. The parameter must be this issuer's origin plus an MCP path,
    without query or fragment."""
    if resource is None:
        return MCP_ROOT
    base = issuer.rstrip("/")
    if not resource.startswith(base + "/") or "?" in resource or "#" in resource:
        return None
    path = resource_of_path(resource[len(base):])
    return path if path in resource_paths(profiles) else None


_USER = re.compile(r"^[A-Za-z0-9_.:@\-]{1,128}$")  # domain/models.NamespaceId


def user_problem(user_id: str) -> str | None:
    """Why a user named on the consent page or for a connect code cannot be one (NamespaceId's rule)."""
    return None if _USER.match(user_id) else "user: 1-128 letters, digits or _ . : @ -"


def is_public_address(address: str) -> bool:
    """Whether a resolved address may be fetched (CIMD): never private, loopback, link-local,
    unique-local, multicast, reserved, IPv4-mapped/compatible, 0.0.0.0/8 or 100.64.0.0/10 (CGNAT)."""
    try:
        ip = ipaddress.ip_address(address.split("%", 1)[0])
    except ValueError:
        return False
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None or ip.sixtofour is not None or ip.teredo is not None:
            return False
        if ip in ipaddress.ip_network("::/96"):  # IPv4-compatible (deprecated) and ::, ::1
            return False
    else:
        if ip in ipaddress.ip_network("0.0.0.0/8") or ip in ipaddress.ip_network("100.64.0.0/10"):
            return False
    return not (ip.is_private or ip.is_loopback or ip.is_link_local or ip.is_multicast or ip.is_reserved
                or ip.is_unspecified or not ip.is_global)


def cimd_problem(client_id: str) -> str | None:
    """Why `client_id` cannot be a Client ID Metadata Document URL: https, a host, a path other than
    `/`, no userinfo, query or fragment (draft-ietf-oauth-client-id-metadata-document §3)."""
    if len(client_id) > 1000:
        return "client_id: at most 1000 characters"
    try:
        parts = urlsplit(client_id)
        _ = parts.port
    except ValueError:
        return "client_id: not a valid URL"
    if parts.scheme != "https" or not parts.hostname:
        return "client_id: a metadata document URL must be https with a host"
    if "@" in parts.netloc or parts.query or parts.fragment or "#" in client_id:
        return "client_id: a metadata document URL has no userinfo, query or fragment"
    if parts.path in ("", "/") or "/./" in parts.path or "/../" in parts.path or parts.path.endswith(("/.", "/..")):
        return "client_id: a metadata document URL needs a path (not /, no dot segments)"
    return None


def cimd_allowed(client_id: str, allow: Iterable[str]) -> bool:
    """Whether the operator's allow-list admits this document URL, on the parsed URL: same scheme,
    the exact host (and port), and a path prefix that ends on a `/` boundary, so that
    `https://claude.ai/` admits `https://claude.ai/oauth/x.json` but not `https://claude.ai.evil.example/`,
    and `https://a.example/oauth` admits `/oauth` and `/oauth/x` but not `/oauthx`."""
    if cimd_problem(client_id) is not None:
        return False
    asked = urlsplit(client_id)
    for entry in allow:
        known = urlsplit(entry)
        if known.scheme != asked.scheme or (known.hostname or "").lower() != (asked.hostname or "").lower():
            continue
        if known.port != asked.port:
            continue
        prefix = known.path or "/"
        if asked.path == prefix or asked.path.startswith(prefix if prefix.endswith("/") else prefix + "/"):
            return True
    return False
