"""Who may use a task: its owner is the caller that made it, within its tenant.

A task is stored with the owner of the call that made it (``scope_of``); a call may
see and use only tasks ``may_use`` allows it. Another owner's task is "not found", with
no hint that it exists.
"""

from __future__ import annotations

from urllib.parse import quote

from parley.server.agent._context import CallContext, Principal


def owner_of(principal: Principal | None) -> str | None:
    """The owner a caller's tasks get, ``scheme:name`` (``None`` when the agent declares
    no security: there is no principal, and tasks are open to every caller)."""
    return None if principal is None else f"{principal.scheme}:{principal.name}"


DEFAULT_TENANT = ""
"""``scope_of`` a call with no principal and no tenant (an agent without security, a
v0.3 request): every task but the tenants' (``may_use``). Its tasks get no owner."""


def scope_of(call: CallContext | None) -> str | None:
    """The owner a call's tasks get, and so the tasks it may use (``may_use``): the
    caller's ``owner_of`` within its tenant (v1.0's ``tenant``). Without a tenant, the
    owner as before (``scheme:name``; ``DEFAULT_TENANT`` when the agent declares no
    security); with one, ``/{tenant, percent-encoded}/{scheme:name, or nothing}``, so
    tenants never share a task, with or without security. ``None`` (no call, a call the
    server makes itself): every task."""
    if call is None:
        return None
    owner = owner_of(call.principal)
    if call.tenant is None:
        return DEFAULT_TENANT if owner is None else owner
    return f"/{quote(call.tenant, safe='')}/{owner or ''}"


def may_use(owner: str | None, caller: str | None) -> bool:
    """Whether ``caller`` (``scope_of`` the call) may see and use a task of ``owner``:
    its owner may; a call with no principal and no tenant (``DEFAULT_TENANT``) may use
    every task but the tenants' (``/...``: an agent without security keeps its open
    behaviour within the default tenant); a call the server makes itself (``None``)
    every task. A task with no owner is not open to a principal: it was made before the
    agent declared security."""
    if caller is None:
        return True
    if not caller:
        return owner is None or not owner.startswith("/")
    return owner == caller
