"""The language layer: from raw message text to the units the checks compare.

Pipeline position: formats → **language** → checks → report.
- `normalize.py`: Unicode folding (NFKC, width, case) used for every comparison;
- `lexicon.py`: the bilingual vocabulary: force words (must/禁止…), concepts, scope and condition markers;
- `constraints.py`: a sentence → its constraint model (force, action/object, scope, conditions, numbers);
- `clauses.py`: a context → sentences and clauses with their message index, role and spans.
"""
