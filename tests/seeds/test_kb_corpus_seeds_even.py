"""Every corpus file at an even position (0-based, in load order) gets a correct seed through the
CPU executor and a search of budget 3 (kb_corpus_run.py); the other half is in
test_kb_corpus_seeds_odd.py."""
from __future__ import annotations

import pytest

from kb_corpus_run import corpus, run_corpus


@pytest.mark.slow  # half the corpus: about 5 minutes on 2 cores (see kb_corpus_run.py)
@pytest.mark.timeout(2700)
def test_every_even_corpus_file_gets_a_correct_seed_and_a_search_of_budget_3(tmp_path):
    run_corpus(tmp_path, corpus()[0::2])
