"""Sign-in for a shared deployment (issue 14): Streamlit's `st.login` with the company's OpenID Connect
provider, configured in `.streamlit/secrets.toml` ([auth] for the provider, [access] for the allow-list;
template `.streamlit/secrets.toml.example`). Without an [auth] section sign-in is off, which is allowed
only on a loopback address (one analyst on their own machine, with a banner saying so) or when
CARENAV_ALLOW_ANONYMOUS=1 says anonymous use is intended.

    python -m carenav_core.ui.auth --address 0.0.0.0 [--secrets FILE]   # preflight: exit 2 if refused

Streamlit's own docs for the [auth] keys: https://docs.streamlit.io/develop/api-reference/user/st.login
"""
from __future__ import annotations

import argparse
import ipaddress
import os
import sys
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

ALLOW_ANONYMOUS = "CARENAV_ALLOW_ANONYMOUS"


class AccessList(BaseModel):
    """The [access] section of secrets.toml: who may use the app once signed in (any match admits)."""

    model_config = ConfigDict(extra="forbid")

    domains: list[str] = Field(default_factory=list, description="E-mail domains admitted, e.g. ['example.org'].")
    emails: list[str] = Field(default_factory=list, description="Single addresses admitted.")
    groups: list[str] = Field(default_factory=list, description="Groups admitted (from the ID token's groups claim).")
    groups_claim: str = Field("groups", description="Name of the ID-token claim listing the user's groups.")


@dataclass(frozen=True, kw_only=True)
class AccessDecision:
    """Whether a signed-in user is admitted, and the reason shown to them."""

    allowed: bool
    reason: str


def is_loopback(address: str | None) -> bool:
    """True for localhost / 127.0.0.0/8 / ::1. An unset address means Streamlit binds every interface."""
    if not address:
        return False
    if address.strip("[]").lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(address.strip("[]")).is_loopback
    except ValueError:
        return False


def anonymous_refusal(address: str | None, *, sign_in: bool, allow_anonymous: bool) -> str | None:
    """Why the app must not serve anonymously on `address`, or None when it may."""
    if sign_in or allow_anonymous or is_loopback(address):
        return None
    return (f"CareNav refuses to serve without sign-in on {address or 'every network interface'} "
            "(server.address is not a loopback address). Configure sign-in in .streamlit/secrets.toml "
            "([auth] and [access]; see .streamlit/secrets.toml.example), bind to 127.0.0.1, or set "
            f"{ALLOW_ANONYMOUS}=1 if anonymous use is intended.")


def decide(claims: Mapping[str, object], access: AccessList) -> AccessDecision:
    """Admit a signed-in user whose verified e-mail (or group) is on the allow-list; fail closed."""
    email = str(claims.get("email") or "").strip().lower()
    if not (access.domains or access.emails or access.groups):
        return AccessDecision(allowed=False, reason="the allow-list ([access] in secrets.toml) is empty")
    if claims.get("email_verified") is False:
        return AccessDecision(allowed=False, reason=f"the provider has not verified the address `{email}`")
    groups = claims.get(access.groups_claim) or []
    groups = [groups] if isinstance(groups, str) else list(groups)
    if email and email in {e.lower() for e in access.emails}:
        return AccessDecision(allowed=True, reason=f"`{email}` is on the allow-list")
    if email and email.rpartition("@")[2] in {d.lower().lstrip("@") for d in access.domains}:
        return AccessDecision(allowed=True, reason=f"the domain of `{email}` is on the allow-list")
    if matched := sorted(set(groups) & set(access.groups)):
        return AccessDecision(allowed=True, reason=f"member of {', '.join(matched)}")
    who = f"`{email}`" if email else "this account"
    return AccessDecision(allowed=False, reason=f"{who} is not on this deployment's allow-list")


def allow_anonymous(environ: Mapping[str, str] = os.environ) -> bool:
    return environ.get(ALLOW_ANONYMOUS, "").strip().lower() in {"1", "true", "yes"}


def require_sign_in() -> None:
    """The gate app.py runs before any page: refuse, ask to sign in, refuse the account, or admit."""
    import streamlit as st

    if not _configured(st, "auth"):
        _anonymous(st)
        return
    if not st.user.get("is_logged_in", False):
        st.title("CareNav")
        st.write("Sign in with your company account to use CareNav.")
        st.button("Sign in", type="primary", on_click=st.login)
        st.stop()
    access = AccessList.model_validate(dict(st.secrets["access"]) if _configured(st, "access") else {})
    decision = decide(st.user.to_dict(), access)
    if not decision.allowed:
        st.title("CareNav")
        st.error(f"Access refused: {decision.reason}. Ask the CareNav administrators to add you, "
                 "or sign out and sign in with another account.")
        st.button("Sign out", on_click=st.logout)
        st.stop()
    st.sidebar.caption(f"Signed in as `{st.user.get('email') or st.user.get('sub')}`")
    st.sidebar.button("Sign out", on_click=st.logout)


def _configured(st, section: str) -> bool:
    """Whether secrets.toml has `section`; no secrets file at all means no."""
    from streamlit.errors import StreamlitSecretNotFoundError
    try:
        return section in st.secrets
    except StreamlitSecretNotFoundError:
        return False


def _anonymous(st) -> None:
    address = st.get_option("server.address")
    refusal = anonymous_refusal(address, sign_in=False, allow_anonymous=allow_anonymous())
    if refusal:
        st.error(refusal)
        st.stop()
    st.sidebar.info("Sign-in is off: this app is served on this machine only (" + str(address) + ")."
                    if is_loopback(address) else
                    f"Sign-in is off and {ALLOW_ANONYMOUS}=1: anyone who reaches this address uses the app.")


def secrets_have_auth(paths: list[Path]) -> bool:
    """True when any of the secrets files has an [auth] section (what Streamlit's st.login reads)."""
    return any(path.is_file() and "auth" in tomllib.loads(path.read_text(encoding="utf-8")) for path in paths)


def main(argv: list[str] | None = None) -> int:
    """Preflight for `streamlit run` (Dockerfile, compose.yml): exit 2 with the reason when refused."""
    parser = argparse.ArgumentParser(description="Refuse to serve anonymously on a non-loopback address.")
    parser.add_argument("--address", required=True, help="the --server.address streamlit will bind")
    parser.add_argument("--secrets", type=Path, action="append", default=[],
                        help="secrets.toml to read (default: ~/.streamlit and ./.streamlit)")
    args = parser.parse_args(argv)
    paths = args.secrets or [Path.home() / ".streamlit" / "secrets.toml", Path(".streamlit") / "secrets.toml"]
    refusal = anonymous_refusal(args.address, sign_in=secrets_have_auth(paths), allow_anonymous=allow_anonymous())
    if refusal:
        print(refusal, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
