"""Agent hooks: `ctxaudit hook claude-code|cursor` and `ctxaudit hook install …` (see cli.py).

No Django here: a hook runs on the developer's machine, next to the agent. It reads the agent's
own files with the engine's transcript readers and talks to the server with ctxaudit.client.
"""
