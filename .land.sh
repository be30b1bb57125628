#!/usr/bin/env bash
# rebase, full suite, land (stops at the first failure)
set -e
cd /work/wt-security
git rebase main
DEBUG=true /work/venv/bin/python manage.py makemigrations --check --dry-run >/dev/null
DEBUG=true timeout 1200 /work/venv/bin/python -m pytest -q -p no:randomly 2>&1 | tail -1 | tee /tmp/sec_last.txt
grep -q "failed\|error" /tmp/sec_last.txt && exit 1
flock /work/land.lock -c 'cd /work/main && git merge --ff-only security'
