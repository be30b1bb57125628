"""Adapters that post compactions from agent frameworks to ctxaudit (optional dependencies;
no Django). Ships in `ctxaudit` and in the light distribution `ctxaudit-client`."""
